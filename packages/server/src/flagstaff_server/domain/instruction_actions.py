"""The LaunchDarkly action each semantic patch instruction needs, and on which resource: a patch
needs every action its instructions imply, all on one flag or segment. Values and one pure
function; `role_policy.decide` makes the decision.

Flag instructions change either one environment's configuration (`turnFlagOn` in the patch's
`environmentKey`) or the flag in every environment (`updateName`): the latter are asked about
`proj/p:env/*:flag/k`. Segments live in one environment, so all their actions are asked there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from flagstaff_server.domain.policy import Resource
from flagstaff_server.domain.role_policy import in_project

Scope = Literal["environment", "flag"]
ANY_ENVIRONMENT = "*"


@dataclass(frozen=True, slots=True)
class Needed:
    action: str
    scope: Scope = "environment"


def _env(action: str) -> Needed:
    return Needed(action, "environment")


def _flag(action: str) -> Needed:
    return Needed(action, "flag")


_RULES = ("addRule", "removeRule", "reorderRules", "replaceRules", "updateRuleVariationOrRollout")
_CLAUSES = ("addClauses", "removeClauses", "updateClause", "addValuesToClause")
_TARGETS = ("addTargets", "removeTargets", "replaceTargets", "clearTargets")
_USER_TARGETS = ("addUserTargets", "removeUserTargets", "replaceUserTargets", "clearUserTargets")
_PREREQUISITES = (
    "addPrerequisite",
    "removePrerequisite",
    "updatePrerequisite",
    "replacePrerequisites",
)

FLAG_INSTRUCTION_ACTIONS: Mapping[str, Needed] = {
    "turnFlagOn": _env("updateOn"),
    "turnFlagOff": _env("updateOn"),
    "updateFallthroughVariationOrRollout": _env("updateFallthrough"),
    "updateOffVariation": _env("updateOffVariation"),
    "updateTrackEvents": _env("updateTrackEvents"),
    "updateTrackEventsFallthrough": _env("updateTrackEvents"),
    **{kind: _env("updateRules") for kind in (*_RULES, *_CLAUSES, "removeValuesFromClause")},
    "updateRuleDescription": _env("updateFlagRuleDescription"),
    "updateRuleTrackEvents": _env("updateTrackEvents"),
    **{kind: _env("updateTargets") for kind in (*_TARGETS, *_USER_TARGETS)},
    **{kind: _env("updatePrerequisites") for kind in _PREREQUISITES},
    "turnOnClientSideAvailability": _flag("updateClientSideFlagAvailability"),
    "turnOffClientSideAvailability": _flag("updateClientSideFlagAvailability"),
    "updateName": _flag("updateName"),
    "updateDescription": _flag("updateDescription"),
    "addTags": _flag("updateTags"),
    "removeTags": _flag("updateTags"),
    "makeFlagPermanent": _flag("updateTemporary"),
    "makeFlagTemporary": _flag("updateTemporary"),
    "archiveFlag": _flag("updateGlobalArchived"),
    "restoreFlag": _flag("updateGlobalArchived"),
    "deprecateFlag": _flag("updateDeprecated"),
    "restoreDeprecatedFlag": _flag("updateDeprecated"),
    "deleteFlag": _flag("deleteFlag"),
    "updateMaintainerMember": _flag("updateMaintainer"),
    "updateMaintainerTeam": _flag("updateMaintainer"),
    "removeMaintainer": _flag("updateMaintainer"),
    "addCustomProperties": _flag("updateFlagCustomProperties"),
    "removeCustomProperties": _flag("updateFlagCustomProperties"),
    "replaceCustomProperties": _flag("updateFlagCustomProperties"),
    "updateDefaultVariation": _flag("updateFlagDefaultVariations"),
    "addVariation": _flag("updateFlagVariations"),
    "removeVariation": _flag("updateFlagVariations"),
    "updateVariation": _flag("updateFlagVariations"),
}
"""Every flag instruction kind Flagstaff applies (a test keeps this in step with the handlers)."""


def release_action(item: Any) -> Needed | None:
    """The action an automated-release instruction needs (LaunchDarkly's measured-rollout
    actions: on a rule when it names one, else on the fallthrough), or None for another kind."""
    kind = item.get("kind") if isinstance(item, dict) else None
    on_rule = isinstance(item, dict) and item.get("ruleId") is not None
    if kind == "startAutomatedRelease":
        return _env(
            "updateRulesWithMeasuredRollout" if on_rule else "updateFallthroughWithMeasuredRollout"
        )
    if kind == "stopAutomatedRelease":
        return _env(
            "stopMeasuredRolloutOnFlagRule" if on_rule else "stopMeasuredRolloutOnFlagFallthrough"
        )
    if kind in ("pauseAutomatedRelease", "resumeAutomatedRelease"):
        return _env("updateMeasuredRolloutConfiguration")
    return None


SEGMENT_INSTRUCTION_ACTIONS: Mapping[str, str] = {
    **{
        f"{verb}{side}{what}": f"update{side}"
        for verb in ("add", "remove")
        for side in ("Included", "Excluded")
        for what in ("Targets", "Users")
    },
    **dict.fromkeys(
        (
            *_RULES[:3],
            *_CLAUSES,
            "removeValuesFromClause",
            "updateRuleDescription",
            "updateRuleRolloutAndContextKind",
        ),
        "updateRules",
    ),
    "updateName": "updateName",
    "updateDescription": "updateDescription",
    "addTags": "updateTags",
    "removeTags": "updateTags",
}
"""Every segment instruction kind (kept in step with the handlers by a test)."""


def instruction_kinds(instructions: Any) -> list[str]:
    """The `kind` of each instruction, in order; malformed ones are left to the patch's own
    checks, which answer with the instruction's JSON pointer."""
    if not isinstance(instructions, list):
        return []
    return [
        item["kind"]
        for item in instructions
        if isinstance(item, dict) and isinstance(item.get("kind"), str)
    ]


def flag_patch_accesses(
    instructions: Sequence[Any],
    *,
    project: str,
    environment: str | None,
    key: str,
    tags: Sequence[str] = (),
) -> list[tuple[str, Resource]]:
    """The (action, resource) pairs a flag semantic patch needs, each once, in order. An unknown
    kind needs nothing here: the patch itself refuses it with a 400."""
    found: dict[tuple[str, str], Resource] = {}
    given = [item for item in instructions if isinstance(item, dict)]
    for item in given:
        kind = item.get("kind")
        if not isinstance(kind, str):
            continue
        needed = FLAG_INSTRUCTION_ACTIONS.get(kind) or release_action(item)
        if needed is None:
            continue
        where = environment if needed.scope == "environment" and environment else ANY_ENVIRONMENT
        resource = in_project("flag", key, project, where, tags=tags)
        found.setdefault((needed.action, str(resource)), resource)
    return [(action, resource) for (action, _), resource in found.items()]


def segment_patch_accesses(
    instructions: Sequence[Any],
    *,
    project: str,
    environment: str,
    key: str,
    tags: Sequence[str] = (),
) -> list[tuple[str, Resource]]:
    resource = in_project("segment", key, project, environment, tags=tags)
    actions = dict.fromkeys(
        SEGMENT_INSTRUCTION_ACTIONS[kind]
        for kind in instruction_kinds(instructions)
        if kind in SEGMENT_INSTRUCTION_ACTIONS
    )
    return [(action, resource) for action in actions]
