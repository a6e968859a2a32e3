"""Single sign-on's pure rules: the checked settings (`check_sso_settings`), what Flagstaff reads
from a validated ID token (`identity_of`), and which teams a member's groups put them in
(`team_changes`). No HTTP, no tokens' cryptography (the OIDC adapter does that), no store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from flagstaff_server.domain.document import (
    is_valid_key,
    refuse_unknown,
    require_object,
    require_string,
)
from flagstaff_server.domain.member import INVITABLE, checked_base_role
from flagstaff_server.domain.role_policy import BaseRole
from flagstaff_server.errors import ValidationError

SETTINGS_FIELDS = frozenset(
    {
        "enabled",
        "issuer",
        "clientId",
        "clientSecret",
        "scopes",
        "groupsClaim",
        "defaultRole",
        "groupTeams",
        "ssoRequired",
    }
)
DEFAULT_SCOPES = ("openid", "email", "profile")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
MAX_TEXT = 2048
MAX_GROUP_TEAMS = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class SsoSettings:
    """The organisation's OpenID Connect settings. `client_secret` is never shown back."""

    enabled: bool = False
    issuer: str = ""
    client_id: str = ""
    client_secret: str = field(default="", repr=False)
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    groups_claim: str = "groups"
    default_role: BaseRole = "reader"
    group_teams: Mapping[str, str] = field(default_factory=dict)
    """An identity provider's group name -> the key of the team its members join."""
    sso_required: bool = False
    """Local passwords then sign in only the owner (the break-glass account)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Identity:
    """Who a validated ID token names."""

    issuer: str
    subject: str
    email: str
    name: str
    groups: tuple[str, ...]


def checked_issuer(value: Any) -> str:
    """An https URL, or http on a loopback address (a provider on the same machine, tests)."""
    text = require_string(value, "/issuer").strip().rstrip("/")
    parts = urlsplit(text)
    if len(text) > MAX_TEXT or not parts.hostname or parts.query or parts.fragment:
        raise ValidationError("issuer must be a URL without query or fragment", path="/issuer")
    if parts.scheme != "https" and not (
        parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS
    ):
        raise ValidationError(
            "issuer must use https (http only on a loopback address)", path="/issuer"
        )
    return text


def checked_text(value: Any, path: str) -> str:
    text = require_string(value, path).strip()
    if not text or len(text) > MAX_TEXT:
        raise ValidationError(f"{path[1:]} must be 1 to {MAX_TEXT} characters", path=path)
    return text


def checked_scopes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise ValidationError("scopes is a list of scope names", path="/scopes")
    if "openid" not in value:
        raise ValidationError("scopes must include openid", path="/scopes")
    if any(" " in scope for scope in value):
        raise ValidationError("a scope name has no spaces", path="/scopes")
    return tuple(dict.fromkeys(value))


def checked_group_teams(value: Any) -> dict[str, str]:
    mapping = require_object(value, "/groupTeams")
    if len(mapping) > MAX_GROUP_TEAMS:
        raise ValidationError(f"at most {MAX_GROUP_TEAMS} group mappings", path="/groupTeams")
    for group, team in mapping.items():
        if not group or not isinstance(team, str) or not is_valid_key(team):
            raise ValidationError(f"not a team key: {team!r}", path=f"/groupTeams/{group}")
    return dict(mapping)


def checked_flag(body: Mapping[str, Any], name: str, default: bool) -> bool:
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise ValidationError(f"{name} is true or false", path=f"/{name}")
    return value


def check_sso_settings(body: Any, current: SsoSettings) -> SsoSettings:
    """The settings a `PUT` body asks for. `clientSecret` left out keeps the current one; an
    enabled configuration needs an issuer and a client id; SSO can be required only when on."""
    form = require_object(body, "")
    refuse_unknown(form, SETTINGS_FIELDS, "")
    enabled = checked_flag(form, "enabled", False)
    required = checked_flag(form, "ssoRequired", False)
    if required and not enabled:
        raise ValidationError("SSO can be required only while it is enabled", path="/ssoRequired")
    if enabled or "issuer" in form or "clientId" in form:
        issuer = checked_issuer(form.get("issuer"))
        client_id = checked_text(form.get("clientId"), "/clientId")
    else:
        issuer, client_id = "", ""
    secret = form.get("clientSecret")
    client_secret = (
        current.client_secret if secret is None else require_string(secret, "/clientSecret")
    )
    return SsoSettings(
        enabled=enabled,
        issuer=issuer,
        client_id=client_id,
        client_secret=client_secret,
        scopes=checked_scopes(form.get("scopes", list(DEFAULT_SCOPES))),
        groups_claim=checked_text(form.get("groupsClaim", "groups"), "/groupsClaim"),
        default_role=checked_base_role(
            form.get("defaultRole", "reader"), "/defaultRole", INVITABLE
        ),
        group_teams=checked_group_teams(form.get("groupTeams", {})),
        sso_required=required,
    )


def settings_document(settings: SsoSettings) -> dict[str, Any]:
    """How the settings are stored (with the secret)."""
    return {**present_settings(settings), "clientSecret": settings.client_secret}


def present_settings(settings: SsoSettings) -> dict[str, Any]:
    """What the API shows: everything but the secret, and whether there is one."""
    return {
        "enabled": settings.enabled,
        "issuer": settings.issuer,
        "clientId": settings.client_id,
        "clientSecretSet": bool(settings.client_secret),
        "scopes": list(settings.scopes),
        "groupsClaim": settings.groups_claim,
        "defaultRole": settings.default_role,
        "groupTeams": dict(settings.group_teams),
        "ssoRequired": settings.sso_required,
    }


def settings_of(doc: Mapping[str, Any] | None) -> SsoSettings:
    """The stored document back to settings (it was checked when written)."""
    if doc is None:
        return SsoSettings()
    return SsoSettings(
        enabled=doc["enabled"],
        issuer=doc["issuer"],
        client_id=doc["clientId"],
        client_secret=doc.get("clientSecret", ""),
        scopes=tuple(doc["scopes"]),
        groups_claim=doc["groupsClaim"],
        default_role=doc["defaultRole"],
        group_teams=dict(doc["groupTeams"]),
        sso_required=doc["ssoRequired"],
    )


def identity_of(claims: Mapping[str, Any], groups_claim: str) -> Identity:
    """The member a validated ID token names. An email is needed (members are found by it) and
    must not be marked unverified; a groups claim that is not a list of strings counts as none."""
    email = claims.get("email")
    if not isinstance(email, str) or not email:
        raise ValidationError("the ID token has no email claim", path="/email")
    if claims.get("email_verified") is False:
        raise ValidationError("the identity provider has not verified the email", path="/email")
    raw_groups = claims.get(groups_claim, [])
    groups: Sequence[Any] = raw_groups if isinstance(raw_groups, list) else []
    name = claims.get("name")
    return Identity(
        issuer=str(claims["iss"]),
        subject=str(claims["sub"]),
        email=email,
        name=name if isinstance(name, str) else "",
        groups=tuple(group for group in groups if isinstance(group, str)),
    )


def team_changes(
    group_teams: Mapping[str, str], groups: Sequence[str], current_teams: Sequence[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """(teams to join, teams to leave): the mapped teams of the member's groups are joined; a
    mapped team none of their groups names is left. Teams no mapping names are left alone, so
    memberships given by hand stay."""
    wanted = {team for group, team in group_teams.items() if group in groups}
    mapped = set(group_teams.values())
    current = set(current_teams)
    return frozenset(wanted - current), frozenset((mapped & current) - wanted)
