"""Teams in LaunchDarkly's shapes (REST v2 `/api/v2/teams`), pure: the checked `teamPostInput`,
and the team semantic patch (`addMembers`, `removeMembers`, `replaceMembers`, `addCustomRoles`,
`removeCustomRoles`, `updateName`, `updateDescription`, `addPermissionGrants` /
`removePermissionGrants` with the `maintainTeam` action set: the team's maintainers) with the
LaunchDarkly action each instruction needs on `team/<key>`.

Whether a member id or role key exists is the caller's question (`services.teams`); this module
only reads shapes. A team document holds `key`, `name`, `description`, `memberIDs`,
`customRoleKeys` and `maintainers` (member ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flagstaff_server.domain.document import (
    Document,
    field,
    refuse_unknown,
)
from flagstaff_server.domain.instruction import Instruction, check_instructions
from flagstaff_server.domain.validation import check_key, check_name, check_text
from flagstaff_server.errors import InvalidInput, ValidationError

KNOWN = frozenset({"key", "name", "description", "customRoleKeys", "memberIDs", "permissionGrants"})
MAINTAIN_TEAM = "maintainTeam"
TEAM_ACTIONS: Mapping[str, str] = {
    "addMembers": "updateTeamMembers",
    "removeMembers": "updateTeamMembers",
    "replaceMembers": "updateTeamMembers",
    "addCustomRoles": "updateTeamCustomRoles",
    "removeCustomRoles": "updateTeamCustomRoles",
    "updateName": "updateTeamName",
    "updateDescription": "updateTeamDescription",
    "addPermissionGrants": "updateTeamPermissionGrants",
    "removePermissionGrants": "updateTeamPermissionGrants",
}
"""Each instruction kind and LaunchDarkly's action for it on `team/<key>`."""


def unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def checked_ids(value: Any, path: str, what: str) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError(f"{what} must be an array of strings", path=path)
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise ValidationError(f"not a {what} entry: {item!r}", path=f"{path}/{index}")
    return unique(value)


def maintainers_of_grants(value: Any, path: str) -> list[str]:
    """The member ids of `permissionGrants` entries with the `maintainTeam` action set (the only
    grant Flagstaff keeps)."""
    if not isinstance(value, list):
        raise ValidationError("permissionGrants must be an array", path=path)
    found: list[str] = []
    for index, grant in enumerate(value):
        at = f"{path}/{index}"
        if not isinstance(grant, dict) or grant.get("actionSet") != MAINTAIN_TEAM:
            raise ValidationError(
                f"a permission grant is {{actionSet: {MAINTAIN_TEAM}, memberIDs}}",
                path=f"{at}/actionSet",
            )
        found += checked_ids(grant.get("memberIDs", []), f"{at}/memberIDs", "member id")
    return unique(found)


def check_team(body: Any) -> Document:
    """The stored fields of a team from a `teamPostInput`; a `ValidationError` names the field."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    given = {name: value for name, value in body.items() if value is not None}
    refuse_unknown(given, KNOWN, "")
    key = check_key(given, "team", strict=True)
    name = check_name(field(given, "name", ""), "/name")
    if not name.strip():
        raise ValidationError("a team needs a name", path="/name")
    return {
        "key": key,
        "name": name,
        "description": check_text(given.get("description", ""), "/description"),
        "memberIDs": checked_ids(given.get("memberIDs", []), "/memberIDs", "member id"),
        "customRoleKeys": checked_ids(
            given.get("customRoleKeys", []), "/customRoleKeys", "role key"
        ),
        "maintainers": maintainers_of_grants(
            given.get("permissionGrants", []), "/permissionGrants"
        ),
    }


def team_instructions(body: Any) -> list[Instruction]:
    """The instructions of a team's semantic patch, each of a known kind."""
    if not isinstance(body, dict):
        raise InvalidInput("a semantic patch must be a JSON object", path="/")
    checked = check_instructions(body.get("instructions"))
    instructions = [Instruction(index=i, params=params) for i, params in enumerate(checked)]
    for instruction in instructions:
        if instruction.kind not in TEAM_ACTIONS:
            raise instruction.error(
                f"unknown instruction; teams take {', '.join(sorted(TEAM_ACTIONS))}", "kind"
            )
    return instructions


def apply_team_instruction(doc: Document, instruction: Instruction) -> Document:
    """The team document after one instruction (a new document; `doc` is not changed)."""
    kind = instruction.kind
    result = dict(doc)
    if kind in ("updateName", "updateDescription"):
        value = instruction.string("value")
        if kind == "updateName":
            if not value.strip():
                raise instruction.error("a team needs a name", "value")
            result["name"] = check_name(value, instruction.path("value"))
        else:
            result["description"] = check_text(value, instruction.path("value"))
        return result
    if kind in ("addPermissionGrants", "removePermissionGrants"):
        if instruction.params.get("actionSet") != MAINTAIN_TEAM:
            raise instruction.error(f"only the {MAINTAIN_TEAM!r} action set", "actionSet")
        values = checked_ids(
            instruction.params.get("memberIDs"), instruction.path("memberIDs"), "member id"
        )
        return {**result, "maintainers": changed(result["maintainers"], kind, values)}
    values = checked_ids(instruction.params.get("values"), instruction.path("values"), "value")
    name = "memberIDs" if kind.endswith("Members") else "customRoleKeys"
    return {**result, name: changed(result[name], kind, values)}


def changed(current: list[str], kind: str, values: list[str]) -> list[str]:
    if kind.startswith("add"):
        return unique([*current, *values])
    if kind.startswith("remove"):
        return [item for item in current if item not in values]
    return values
