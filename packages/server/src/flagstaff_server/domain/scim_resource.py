"""The SCIM User and Group documents Flagstaff accepts (RFC 7643 §4), pure: the attributes it keeps
checked and reduced to a stored form, read-only and unknown ones dropped. A User becomes a member
(its email the primary address, else the first, else an email-shaped userName); a Group becomes
a team.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.scim_error import ScimInvalid

NAME_PARTS = ("formatted", "familyName", "givenName")
EMAIL_PARTS = ("value", "type", "primary")


def bad(message: str, path: str) -> ScimInvalid:
    return ScimInvalid(message, scim_type="invalidValue", path=path)


def lookup(body: Mapping[str, Any], name: str) -> Any:
    """A member of `body` by name without case (clients differ)."""
    for key, value in body.items():
        if key.lower() == name.lower():
            return value
    return None


def text_at(body: Mapping[str, Any], name: str, path: str, *, required: bool = False) -> str | None:
    value = lookup(body, name)
    if value is None:
        if required:
            raise bad(f"{name} is required", path)
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise bad(f"{name} must be a non-empty string", path)
    return value


def flag_at(body: Mapping[str, Any], name: str, path: str) -> bool | None:
    """A boolean, or the strings `"True"`/`"False"` some identity providers send."""
    value = lookup(body, name)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if value is not None and not isinstance(value, bool):
        raise bad(f"{name} must be true or false", path)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class UserForm:
    attributes: dict[str, Any]
    """What is stored of the User (userName, externalId, name, displayName, emails)."""
    email: str
    active: bool | None
    """None: not given (the member stays as it is, active when new)."""


def check_user(body: Any) -> UserForm:
    if not isinstance(body, dict):
        raise ScimInvalid("the body must be a User object", scim_type="invalidSyntax", path="/")
    user_name = text_at(body, "userName", "/userName", required=True)
    kept: dict[str, Any] = {"userName": user_name}
    for name in ("externalId", "displayName"):
        value = text_at(body, name, f"/{name}")
        if value is not None:
            kept[name] = value
    name_value = lookup(body, "name")
    if name_value is not None:
        if not isinstance(name_value, dict):
            raise bad("name must be an object", "/name")
        parts = {p: text_at(name_value, p, f"/name/{p}") for p in NAME_PARTS}
        kept["name"] = {p: v for p, v in parts.items() if v is not None}
    emails = checked_emails(lookup(body, "emails"))
    if emails:
        kept["emails"] = emails
    active = flag_at(body, "active", "/active")
    return UserForm(attributes=kept, email=email_of(emails, str(user_name)), active=active)


def checked_emails(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad("emails must be an array", "/emails")
    found: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        at = f"/emails/{index}"
        if not isinstance(item, dict):
            raise bad("an email is an object {value, type, primary}", at)
        address = text_at(item, "value", f"{at}/value", required=True)
        entry: dict[str, Any] = {"value": address}
        kind = text_at(item, "type", f"{at}/type")
        if kind is not None:
            entry["type"] = kind
        primary = flag_at(item, "primary", f"{at}/primary")
        if primary is not None:
            entry["primary"] = primary
        found.append(entry)
    if sum(1 for e in found if e.get("primary")) > 1:
        raise bad("at most one email is primary", "/emails")
    return found


def email_of(emails: list[dict[str, Any]], user_name: str) -> str:
    primary = [e["value"] for e in emails if e.get("primary")]
    if primary:
        return str(primary[0])
    if emails:
        return str(emails[0]["value"])
    if "@" in user_name:
        return user_name
    raise bad("a member needs an email: give emails, or a userName that is an email", "/emails")


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupForm:
    display_name: str
    external_id: str | None
    member_ids: tuple[str, ...]


def check_group(body: Any) -> GroupForm:
    if not isinstance(body, dict):
        raise ScimInvalid("the body must be a Group object", scim_type="invalidSyntax", path="/")
    display_name = text_at(body, "displayName", "/displayName", required=True)
    members = lookup(body, "members") or []
    if not isinstance(members, list):
        raise bad("members must be an array", "/members")
    ids: list[str] = []
    for index, item in enumerate(members):
        if not isinstance(item, dict):
            raise bad("a member is an object {value}", f"/members/{index}")
        value = text_at(item, "value", f"/members/{index}/value", required=True)
        if value not in ids:
            ids.append(str(value))
    return GroupForm(
        display_name=str(display_name).strip(),
        external_id=text_at(body, "externalId", "/externalId"),
        member_ids=tuple(ids),
    )


__all__ = ["GroupForm", "UserForm", "check_group", "check_user"]
