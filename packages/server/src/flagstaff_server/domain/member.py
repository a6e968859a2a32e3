"""Members in LaunchDarkly's shapes (REST v2 `/api/v2/members`), pure: base roles, the checked
`NewMemberForm`, the JSON Patch a member accepts (`/role`, `/customRoles`, and Flagstaff's
`/deactivated`), the patch of one's own profile (`/firstName`, `/lastName`), and the member
filter (`role:reader|writer,query:ada,team:ops`).

A member is a local account (`services.identity_ports.AccountRecord`): its base role is
`doc["baseRole"]` (any of LaunchDarkly's five), while the account's `role` column keeps the
nearest of the three fixed roles (owner -> admin, no_access -> reader) for what shows a role.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import (
    is_valid_key,
    refuse_unknown,
    require_list,
    require_object,
    require_string,
)
from flagstaff_server.domain.json_patch import parse_pointer
from flagstaff_server.domain.role_policy import BASE_ROLES, BaseRole
from flagstaff_server.errors import InvalidInput, ValidationError

INVITABLE: tuple[BaseRole, ...] = ("no_access", "reader", "writer", "admin")
"""Roles a member may be given: `owner` is the account's first admin, never assigned."""
FIXED_ROLE: Mapping[BaseRole, str] = {
    "no_access": "reader",
    "reader": "reader",
    "writer": "writer",
    "admin": "admin",
    "owner": "admin",
}
NEW_MEMBER_FIELDS = frozenset(
    {"email", "password", "firstName", "lastName", "role", "customRoles", "teamKeys"}
)
MAX_INVITES = 50
PROFILE_FIELDS = frozenset({"firstName", "lastName"})
NAME_MAX = 200
FILTER_FIELDS = frozenset({"role", "query", "email", "id", "team", "noteam"})


@dataclass(frozen=True, slots=True, kw_only=True)
class NewMember:
    email: str
    role: BaseRole
    custom_roles: tuple[str, ...]
    team_keys: tuple[str, ...]
    first_name: str
    last_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberPatch:
    """What a member's JSON Patch changes; None: unchanged."""

    role: BaseRole | None = None
    custom_roles: tuple[str, ...] | None = None
    deactivated: bool | None = None


def checked_base_role(value: Any, path: str, allowed: tuple[BaseRole, ...] = INVITABLE) -> BaseRole:
    if value not in allowed:
        raise ValidationError(f"role must be one of {', '.join(allowed)}, got {value!r}", path=path)
    role: BaseRole = value
    return role


def checked_keys(value: Any, path: str, what: str) -> tuple[str, ...]:
    items = require_list(value, path)
    keys: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or not is_valid_key(item):
            raise ValidationError(f"not a {what} key: {item!r}", path=f"{path}/{index}")
        if item not in keys:
            keys.append(item)
    return tuple(keys)


def check_new_members(body: Any) -> list[NewMember]:
    """LaunchDarkly's `[NewMemberForm]` (1 to 50, all or nothing). Each needs `role` or
    `customRoles`; with custom roles only, the base role is `no_access`."""
    if not isinstance(body, list) or not body:
        raise InvalidInput("the body must be a non-empty array of new members", path="/")
    if len(body) > MAX_INVITES:
        raise ValidationError(f"at most {MAX_INVITES} members at once", path="/")
    members: list[NewMember] = []
    for index, item in enumerate(body):
        at = f"/{index}"
        form = require_object(item, at)
        refuse_unknown(form, NEW_MEMBER_FIELDS, at)
        if "password" in form:
            raise ValidationError(
                "an invited member sets their own password through the invitation link",
                path=f"{at}/password",
            )
        email = require_string(form.get("email"), f"{at}/email")
        custom = checked_keys(form.get("customRoles", []), f"{at}/customRoles", "role")
        if "role" not in form and not custom:
            raise ValidationError("a member needs a role or customRoles", path=f"{at}/role")
        role = checked_base_role(form.get("role", "no_access"), f"{at}/role")
        members.append(
            NewMember(
                email=email,
                role=role,
                custom_roles=custom,
                team_keys=checked_keys(form.get("teamKeys", []), f"{at}/teamKeys", "team"),
                first_name=require_string(form.get("firstName", ""), f"{at}/firstName"),
                last_name=require_string(form.get("lastName", ""), f"{at}/lastName"),
            )
        )
    return members


def check_member_patch(
    operations: list[dict[str, Any]], custom_roles: tuple[str, ...]
) -> MemberPatch:
    """The changes of a member's JSON Patch: only `replace` of `/role`, `add`/`replace`/`remove`
    of `/customRoles` or `/customRoles/<i>` (LaunchDarkly's), and `replace` of `/deactivated`
    (Flagstaff's). `custom_roles` are the member's current ones."""
    role: BaseRole | None = None
    deactivated: bool | None = None
    roles = list(custom_roles)
    touched = False
    for index, operation in enumerate(operations):
        at = f"/{index}"
        op, path = operation.get("op"), operation.get("path")
        if not isinstance(path, str):
            raise ValidationError("a patch operation needs a path", path=f"{at}/path")
        tokens = parse_pointer(path, at=f"{at}/path")
        if tokens == ["role"] and op == "replace":
            role = checked_base_role(operation.get("value"), f"{at}/value")
        elif tokens == ["deactivated"] and op == "replace":
            value = operation.get("value")
            if not isinstance(value, bool):
                raise ValidationError("deactivated is true or false", path=f"{at}/value")
            deactivated = value
        elif tokens[:1] == ["customRoles"] and len(tokens) <= 2:
            touched = True
            roles = patched_roles(roles, op, tokens[1:], operation.get("value"), at)
        else:
            raise ValidationError(
                "a member's patch may replace /role or /deactivated, or change /customRoles",
                path=f"{at}/path",
            )
    return MemberPatch(
        role=role, custom_roles=tuple(roles) if touched else None, deactivated=deactivated
    )


def check_profile_patch(operations: list[dict[str, Any]]) -> dict[str, str]:
    """The names a member's patch of their own profile sets: `add` or `replace` of `/firstName`
    and `/lastName` only, each a string of at most `NAME_MAX` characters, kept trimmed."""
    names: dict[str, str] = {}
    for index, operation in enumerate(operations):
        at = f"/{index}"
        path = operation.get("path")
        if not isinstance(path, str):
            raise ValidationError("a patch operation needs a path", path=f"{at}/path")
        tokens = parse_pointer(path, at=f"{at}/path")
        if len(tokens) != 1 or tokens[0] not in PROFILE_FIELDS:
            raise ValidationError(
                "your profile's patch may replace /firstName or /lastName", path=f"{at}/path"
            )
        if operation.get("op") not in ("add", "replace"):
            raise ValidationError(f"{tokens[0]} is replaced (op replace)", path=f"{at}/op")
        value = operation.get("value")
        if not isinstance(value, str) or len(value.strip()) > NAME_MAX:
            raise ValidationError(
                f"{tokens[0]} is text of at most {NAME_MAX} characters", path=f"{at}/value"
            )
        names[tokens[0]] = value.strip()
    return names


def patched_roles(roles: list[str], op: Any, rest: list[str], value: Any, at: str) -> list[str]:
    if not rest:
        if op not in ("add", "replace"):
            raise ValidationError("/customRoles may be added or replaced", path=f"{at}/op")
        return list(checked_keys(value, f"{at}/value", "role"))
    index_text = rest[0]
    if op == "add" and index_text == "-":
        return [*roles, *checked_keys([value], f"{at}/value", "role")]
    if not index_text.isdigit() or int(index_text) > len(roles) - (op != "add"):
        raise ValidationError(f"no custom role at {index_text!r}", path=f"{at}/path")
    position = int(index_text)
    if op == "remove":
        return roles[:position] + roles[position + 1 :]
    (key,) = checked_keys([value], f"{at}/value", "role")
    if op == "add":
        return [*roles[:position], key, *roles[position:]]
    if op == "replace":
        return [*roles[:position], key, *roles[position + 1 :]]
    raise ValidationError("use add, replace or remove", path=f"{at}/op")


def parse_member_filter(text: str | None) -> dict[str, str]:
    """`field:value,field:value` (LaunchDarkly's member filter); an unknown field is a 400."""
    if not text:
        return {}
    found: dict[str, str] = {}
    for part in text.split(","):
        name, sep, value = part.partition(":")
        name = name.strip()
        if not sep or name not in FILTER_FIELDS:
            raise ValidationError(
                f"filter fields are {', '.join(sorted(FILTER_FIELDS))}, as field:value",
                path="/filter",
            )
        found[name] = value.strip()
    return found


def matches_filter(member: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    """Whether a member's representation passes the filter (roles `|`-separated; an owner
    counts as an admin, as LaunchDarkly)."""
    for name, value in wanted.items():
        if name == "role":
            role = "admin" if member["role"] == "owner" else member["role"]
            if role not in value.split("|"):
                return False
        elif name == "query":
            text = f"{member['email']} {member['firstName']} {member['lastName']}".lower()
            if value.lower() not in text:
                return False
        elif name in ("email", "id"):
            field_name = "_id" if name == "id" else "email"
            if member[field_name] not in value.split("|"):
                return False
        elif name == "team":
            if value not in [team["key"] for team in member["teams"]]:
                return False
        elif name == "noteam" and (value == "true") == bool(member["teams"]):
            return False
    return True


__all__ = ["BASE_ROLES", "FIXED_ROLE", "MemberPatch", "NewMember", "check_new_members"]
