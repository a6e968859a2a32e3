"""Single sign-on's use cases over the in-memory store, with a fake OpenID client standing for the
provider (the real one, oidc-provider, is in tests/e2e/oidc): settings checks, just-in-time
members, group -> team sync, the one-time state bound to the browser, "SSO required" with the
owner's break-glass password, and the audit entries of sign-ins and failed sign-ins."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.errors import Forbidden, IdentityProviderError, ValidationError
from flagstaff_server.services import members, sessions, sso, sso_settings, teams
from flagstaff_server.services.access import ADMIN_TOKEN_ID, Actor
from flagstaff_server.services.password import hash_password
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import AccountRecord
from flagstaff_server.services.sso_ports import AuthorizationStart, OidcClientConfig
from support.clock import FakeClock
from support.in_process import control_plane

ADMIN = Actor(token_id=ADMIN_TOKEN_ID, name="admin", role="admin")
ISSUER = "https://idp.example.com"
REDIRECT = "http://flagstaff.test/api/v2/session/sso/callback"
OWNER_PASSWORD = "break glass in an emergency"
OWNER_HASH = hash_password(OWNER_PASSWORD)  # once: scrypt is slow on purpose


@dataclass
class FakeProvider:
    """Answers like a provider whose ID tokens already passed the adapter's checks."""

    claims: dict[str, Any] = field(default_factory=dict)
    refusal: str | None = None
    started: list[AuthorizationStart] = field(default_factory=list)

    def authorization_url(self, config: OidcClientConfig, start: AuthorizationStart) -> str:
        self.started.append(start)
        return f"{config.issuer}/auth?state={start.state}"

    def redeem(
        self, config: OidcClientConfig, start: AuthorizationStart, code: str
    ) -> Mapping[str, Any]:
        assert start in self.started
        assert code == "the-code"
        if self.refusal:
            raise IdentityProviderError(self.refusal)
        return {"iss": ISSUER, "aud": config.client_id, "nonce": start.nonce, **self.claims}


@pytest.fixture
def provider() -> FakeProvider:
    return FakeProvider(
        claims={"sub": "u-1", "email": "Ada@Example.com", "name": "Ada Lovelace", "groups": []}
    )


@pytest.fixture
def plane(provider: FakeProvider) -> ControlPlane:
    base = control_plane(InMemoryStore(), clock=FakeClock())
    made = ControlPlane(
        store=base.store, feed=base.feed, clock=base.clock, key_grace=base.key_grace, oidc=provider
    )
    with made.store.unit_of_work() as uow:
        uow.accounts.add(
            AccountRecord(
                id="owner-1",
                email="owner@example.com",
                role="admin",
                password_hash=OWNER_HASH,
                created=made.clock(),
                doc={"baseRole": "owner", "customRoles": []},
            )
        )
    teams.create_team(made, ADMIN, {"key": "eng", "name": "Engineering"})
    teams.create_team(made, ADMIN, {"key": "ops", "name": "Operations"})
    return made


def enable(plane: ControlPlane, **extra: Any) -> dict[str, Any]:
    body = {
        "enabled": True,
        "issuer": ISSUER,
        "clientId": "flagstaff",
        "clientSecret": "s3cret",
        "groupTeams": {"engineering": "eng", "oncall": "ops"},
        **extra,
    }
    return sso_settings.put_settings(plane, ADMIN, body)


def sign_in(plane: ControlPlane, *, browser_state: str | None = "") -> sessions.SignedIn:
    started = sso.start_sign_in(plane, redirect_uri=REDIRECT)
    state = started.state if browser_state == "" else browser_state
    callback = sso.Callback(
        state=started.state, code="the-code", error=None, browser_state=state, client="10.0.0.1"
    )
    return sso.finish_sign_in(plane, callback)


def member(plane: ControlPlane, email: str) -> AccountRecord:
    with plane.read() as uow:
        found = uow.accounts.find_by_email(email)
    assert found is not None
    return found


def team_members(plane: ControlPlane, key: str) -> list[str]:
    return list(teams.get_team(plane, ADMIN, key)["memberIDs"])


def audit_actions(plane: ControlPlane) -> list[tuple[str, Any]]:
    with plane.read() as uow:
        return [(e.action, e.after) for e in uow.audit.list(limit=1000)]


def test_settings_never_show_the_secret_and_keep_it_when_left_out(plane: ControlPlane) -> None:
    shown = enable(plane)
    assert shown["clientSecretSet"] is True
    assert "clientSecret" not in shown
    again = sso_settings.put_settings(
        plane, ADMIN, {"enabled": True, "issuer": ISSUER, "clientId": "flagstaff"}
    )
    assert again["clientSecretSet"] is True
    entry = next(after for action, after in audit_actions(plane) if action == "updateSsoSettings")
    assert "clientSecret" not in entry


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"enabled": True, "issuer": "http://idp.example.com", "clientId": "c"}, "/issuer"),
        ({"enabled": True, "issuer": ISSUER}, "/clientId"),
        ({"enabled": True, "issuer": ISSUER, "clientId": "c", "scopes": ["email"]}, "/scopes"),
        (
            {"enabled": True, "issuer": ISSUER, "clientId": "c", "defaultRole": "owner"},
            "/defaultRole",
        ),
        (
            {"enabled": True, "issuer": ISSUER, "clientId": "c", "groupTeams": {"g": "nope"}},
            "/groupTeams/g",
        ),
        ({"enabled": False, "ssoRequired": True}, "/ssoRequired"),
        ({"enabled": True, "issuer": ISSUER, "clientId": "c", "colour": "red"}, "/colour"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(
    plane: ControlPlane, body: dict[str, Any], path: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        sso_settings.put_settings(plane, ADMIN, body)
    assert refused.value.path == path


def test_settings_need_an_unscoped_admin(plane: ControlPlane) -> None:
    with pytest.raises(Forbidden):
        sso_settings.get_settings(plane, Actor(token_id="t", name="w", role="writer"))


def test_first_sign_in_creates_the_member_with_the_default_role_and_mapped_teams(
    plane: ControlPlane, provider: FakeProvider
) -> None:
    enable(plane, defaultRole="writer")
    provider.claims["groups"] = ["engineering", "unmapped"]
    signed_in = sign_in(plane)
    ada = member(plane, "ada@example.com")
    assert ada.doc["baseRole"] == "writer"
    assert ada.password_hash == ""
    assert signed_in.actor.member_id == ada.id
    assert team_members(plane, "eng") == [ada.id]
    assert team_members(plane, "ops") == []
    actions = audit_actions(plane)
    assert ("signIn", {"method": "sso", "client": "10.0.0.1"}) in actions
    assert "createMember" in [action for action, _ in actions]


def test_a_later_sign_in_moves_the_member_between_mapped_teams_only(
    plane: ControlPlane, provider: FakeProvider
) -> None:
    enable(plane)
    provider.claims["groups"] = ["engineering"]
    sign_in(plane)
    ada = member(plane, "ada@example.com")
    teams.patch_team(
        plane, ADMIN, "ops", {"instructions": [{"kind": "addMembers", "values": [ada.id]}]}
    )
    sso_settings.put_settings(
        plane,
        ADMIN,
        {
            "enabled": True,
            "issuer": ISSUER,
            "clientId": "flagstaff",
            "groupTeams": {"engineering": "eng"},
        },
    )
    provider.claims["groups"] = []
    sign_in(plane)
    assert team_members(plane, "eng") == []
    assert team_members(plane, "ops") == [ada.id]  # given by hand, not mapped: kept


def test_an_existing_member_is_linked_by_email_and_found_by_subject_after(
    plane: ControlPlane, provider: FakeProvider
) -> None:
    enable(plane)
    provider.claims["email"] = "owner@example.com"
    first = sign_in(plane)
    assert first.actor.member_id == "owner-1"
    provider.claims["email"] = "renamed@example.com"
    assert sign_in(plane).actor.member_id == "owner-1"


def test_a_state_not_from_this_browser_or_used_twice_is_refused(plane: ControlPlane) -> None:
    enable(plane)
    with pytest.raises(IdentityProviderError, match="not started in this browser"):
        sign_in(plane, browser_state="someone-elses")
    started = sso.start_sign_in(plane, redirect_uri=REDIRECT)
    callback = sso.Callback(
        state=started.state, code="the-code", error=None, browser_state=started.state, client=None
    )
    sso.finish_sign_in(plane, callback)
    with pytest.raises(IdentityProviderError, match="used or expired"):
        sso.finish_sign_in(plane, callback)


def test_a_refused_id_token_is_a_failed_sign_in_with_its_reason(
    plane: ControlPlane, provider: FakeProvider
) -> None:
    enable(plane)
    provider.refusal = "the ID token's signature was refused: bad_signature"
    with pytest.raises(IdentityProviderError):
        sign_in(plane)
    failed = [after for action, after in audit_actions(plane) if action == "signInFailed"]
    assert failed
    assert failed[0]["method"] == "sso"
    assert failed[0]["reason"] == provider.refusal
    with plane.read() as uow:
        assert uow.accounts.find_by_email("ada@example.com") is None


def test_an_unverified_email_is_refused(plane: ControlPlane, provider: FakeProvider) -> None:
    enable(plane)
    provider.claims["email_verified"] = False
    with pytest.raises(IdentityProviderError, match="not verified"):
        sign_in(plane)


def test_sso_required_leaves_passwords_to_the_owner_only(plane: ControlPlane) -> None:
    enable(plane, ssoRequired=True)
    sign_in(plane)
    with plane.store.unit_of_work() as uow:
        ada = uow.accounts.get(member(plane, "ada@example.com").id)
        assert ada is not None
        uow.accounts.replace(
            AccountRecord(
                id=ada.id,
                email=ada.email,
                role=ada.role,
                password_hash=hash_password("a local password too"),
                created=ada.created,
                doc=ada.doc,
            )
        )
    with pytest.raises(Forbidden, match="single sign-on"):
        sessions.sign_in_with_password(plane, "ada@example.com", "a local password too")
    owner = sessions.sign_in_with_password(plane, "owner@example.com", OWNER_PASSWORD)
    assert owner.actor.member_id == "owner-1"
    assert sso_settings.public_settings(plane) == {"enabled": True, "required": True}


def test_a_deactivated_member_cannot_sign_in_with_sso(plane: ControlPlane) -> None:
    enable(plane)
    sign_in(plane)
    ada = member(plane, "ada@example.com")
    members.patch_member(
        plane, ADMIN, ada.id, [{"op": "replace", "path": "/deactivated", "value": True}]
    )
    with pytest.raises(IdentityProviderError, match="deactivated"):
        sign_in(plane)
