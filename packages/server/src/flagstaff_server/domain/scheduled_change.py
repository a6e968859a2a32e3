"""Scheduled changes in LaunchDarkly's shapes, pure: the create body (`executionDate`,
`instructions`, `comment`), the semantic patch that edits one
(`replaceScheduledChangesInstructions`, `updateScheduledChangesExecutionDate`,
`deleteScheduledChange`), and which part of a flag an
instruction touches, so that two changes touching the same part are reported as conflicts.
No clock and no store: the caller hands in "now" and the other changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import require_comment
from flagstaff_server.domain.instruction import check_instructions
from flagstaff_server.errors import InvalidInput, ValidationError

MAX_INSTRUCTIONS = 100
"""As LaunchDarkly: between 1 and 100 instructions in one scheduled change."""
MAX_EPOCH_MILLIS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, the last moment a datetime holds."""

EDIT_KINDS = (
    "replaceScheduledChangesInstructions",
    "updateScheduledChangesExecutionDate",
    "deleteScheduledChange",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduleRequest:
    """A parsed create body."""

    execution_ms: int
    instructions: list[dict[str, Any]]
    comment: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduleEdit:
    """A parsed PATCH: what to change (None: keep), or delete the change."""

    instructions: list[dict[str, Any]] | None = None
    instructions_path: str = "/instructions"
    """Where the new instructions are in the PATCH body (`/instructions/I/value`), for errors."""
    execution_ms: int | None = None
    delete: bool = False
    comment: str | None = None


def check_execution_date(value: Any, path: str, *, now_ms: int) -> int:
    """An integer of epoch milliseconds, not before `now_ms`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(
            "'executionDate' must be an integer of Unix epoch milliseconds", path=path
        )
    if not 0 <= value <= MAX_EPOCH_MILLIS:
        raise ValidationError("'executionDate' is out of range", path=path)
    if value < now_ms:
        raise ValidationError(
            f"'executionDate' {value} is in the past (now is {now_ms}); a scheduled change "
            "must be due now or later",
            path=path,
        )
    return value


def check_schedule_instructions(value: Any, path: str) -> list[dict[str, Any]]:
    """1 to 100 instruction objects with a string `kind`; their meaning is checked against the
    flag by the caller (errors then name `path`/i/...)."""
    try:
        instructions = check_instructions(value)
    except ValidationError as exc:
        moved = (exc.path or "").replace("/instructions", path, 1)
        raise ValidationError(exc.message, path=moved) from None
    if len(instructions) > MAX_INSTRUCTIONS:
        raise ValidationError(
            f"a scheduled change holds at most {MAX_INSTRUCTIONS} instructions, "
            f"got {len(instructions)}",
            path=path,
        )
    for index, instruction in enumerate(instructions):
        if instruction["kind"] in EDIT_KINDS:
            raise ValidationError(
                f"{instruction['kind']!r} edits a scheduled change; it cannot be scheduled",
                path=f"{path}/{index}/kind",
            )
    return instructions


def parse_schedule_body(body: Any, *, now_ms: int) -> ScheduleRequest:
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    if "executionDate" not in body:
        raise ValidationError("'executionDate' is required", path="/executionDate")
    return ScheduleRequest(
        execution_ms=check_execution_date(body["executionDate"], "/executionDate", now_ms=now_ms),
        instructions=check_schedule_instructions(body.get("instructions"), "/instructions"),
        comment=require_comment(body),
    )


def parse_schedule_patch(body: Any, *, now_ms: int) -> ScheduleEdit:
    """LaunchDarkly's semantic patch of a scheduled change, all or nothing."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    comment = require_comment(body)
    instructions: list[dict[str, Any]] | None = None
    instructions_path = "/instructions"
    execution_ms: int | None = None
    delete = False
    for index, instruction in enumerate(check_instructions(body.get("instructions"))):
        kind, at = instruction["kind"], f"/instructions/{index}"
        if kind == "deleteScheduledChange":
            delete = True
        elif kind == "replaceScheduledChangesInstructions":
            instructions_path = f"{at}/value"
            instructions = check_schedule_instructions(instruction.get("value"), instructions_path)
        elif kind == "updateScheduledChangesExecutionDate":
            execution_ms = check_execution_date(
                instruction.get("value"), f"{at}/value", now_ms=now_ms
            )
        else:
            raise ValidationError(
                f"unknown instruction kind {kind!r} for a scheduled change: use "
                + ", ".join(EDIT_KINDS),
                path=f"{at}/kind",
            )
    return ScheduleEdit(
        instructions=instructions,
        instructions_path=instructions_path,
        execution_ms=execution_ms,
        delete=delete,
        comment=comment,
    )


# what an instruction touches ------------------------------------------------------------------

_ENVIRONMENT_PARTS = {
    "turnFlagOn": "on",
    "turnFlagOff": "on",
    "updateFallthroughVariationOrRollout": "fallthrough",
    "updateOffVariation": "offVariation",
    "updateTrackEvents": "trackEvents",
    "updateTrackEventsFallthrough": "trackEventsFallthrough",
    "addRule": "rules",
    "reorderRules": "rules",
    "replaceRules": "rules",
    "addTargets": "targets",
    "removeTargets": "targets",
    "replaceTargets": "targets",
    "clearTargets": "targets",
    "addUserTargets": "targets",
    "removeUserTargets": "targets",
    "replaceUserTargets": "targets",
    "clearUserTargets": "targets",
    "replacePrerequisites": "prerequisites",
}
"""Instructions that change one part of the flag's configuration in the environment."""

_RULE_KINDS = frozenset(
    {
        "removeRule",
        "updateRuleVariationOrRollout",
        "updateRuleDescription",
        "updateRuleTrackEvents",
        "addClauses",
        "removeClauses",
        "updateClause",
        "addValuesToClause",
        "removeValuesFromClause",
    }
)
"""Instructions on one rule, named by `ruleId`."""

_PREREQUISITE_KINDS = frozenset({"addPrerequisite", "removePrerequisite", "updatePrerequisite"})

_FLAG_PARTS = {
    "updateName": "name",
    "updateDescription": "description",
    "addTags": "tags",
    "removeTags": "tags",
    "makeFlagPermanent": "temporary",
    "makeFlagTemporary": "temporary",
    "archiveFlag": "archived",
    "restoreFlag": "archived",
    "deprecateFlag": "deprecated",
    "restoreDeprecatedFlag": "deprecated",
    "updateMaintainerMember": "maintainer",
    "updateMaintainerTeam": "maintainer",
    "removeMaintainer": "maintainer",
    "addCustomProperties": "customProperties",
    "removeCustomProperties": "customProperties",
    "replaceCustomProperties": "customProperties",
    "turnOnClientSideAvailability": "clientSideAvailability",
    "turnOffClientSideAvailability": "clientSideAvailability",
    "addVariation": "variations",
    "removeVariation": "variations",
    "updateVariation": "variations",
    "updateDefaultVariation": "defaults",
}
"""Instructions that change the flag in every environment."""


def touched_part(instruction: dict[str, Any], environment: str) -> str:
    """The part of the flag `instruction` changes, as a path: `env/E/on`, `env/E/rules/ID`,
    `flag/name`, ...; `*` for the whole flag (`deleteFlag`, an unknown kind)."""
    kind = instruction.get("kind")
    if isinstance(kind, str) and kind in _ENVIRONMENT_PARTS:
        return f"env/{environment}/{_ENVIRONMENT_PARTS[kind]}"
    if kind in _RULE_KINDS:
        return f"env/{environment}/rules/{instruction.get('ruleId')}"
    if kind in _PREREQUISITE_KINDS:
        return f"env/{environment}/prerequisites/{instruction.get('key')}"
    if isinstance(kind, str) and kind in _FLAG_PARTS:
        return f"flag/{_FLAG_PARTS[kind]}"
    return "*"


def overlaps(first: str, second: str) -> bool:
    """Whether two parts intersect: equal, one inside the other, or the whole flag."""
    if "*" in (first, second):
        return True
    return first == second or first.startswith(second + "/") or second.startswith(first + "/")


@dataclass(frozen=True, slots=True, kw_only=True)
class OtherChange:
    """A pending change of the same flag, as the conflict check sees it."""

    id: str
    environment: str
    execution_ms: int
    instructions: Sequence[dict[str, Any]]


def conflicts_with(
    instructions: Iterable[dict[str, Any]], environment: str, others: Iterable[OtherChange]
) -> list[dict[str, Any]]:
    """LaunchDarkly's `conflicts`: `{instruction, reason}` for each of `instructions` that changes
    a part of the flag another pending change also changes (with that change's `_id` in
    `scheduledChangeId`)."""
    found: list[dict[str, Any]] = []
    others = list(others)
    for instruction in instructions:
        mine = touched_part(instruction, environment)
        for other in others:
            for theirs in other.instructions:
                if overlaps(mine, touched_part(theirs, other.environment)):
                    found.append(
                        {
                            "instruction": instruction,
                            "reason": f"{instruction.get('kind')} changes what scheduled change "
                            f"{other.id} ({theirs.get('kind')} at {other.execution_ms}) "
                            "also changes",
                            "scheduledChangeId": other.id,
                        }
                    )
                    break
    return found
