"""Single sign-on with OpenID Connect: start a sign-in (state, nonce and PKCE verifier kept in
the store for ten minutes, used once) and finish it (the provider's code redeemed through the
`OidcClient` port, the ID token checked there), creating the member just in time with the
default role, putting them in the teams their groups map to, and opening a session. Every
refusal is a failed sign-in in the audit log with its reason. No HTTP here."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from flagstaff_server.domain.member import FIXED_ROLE
from flagstaff_server.domain.sso import Identity, SsoSettings, identity_of, team_changes
from flagstaff_server.errors import IdentityProviderError, NotFound, ValidationError
from flagstaff_server.services import members
from flagstaff_server.services.access import Actor, hash_secret
from flagstaff_server.services.accounts import actor_of, subject_of
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.member_access import is_active, teams_of
from flagstaff_server.services.plane import (
    ControlPlane,
    Transaction,
    epoch_millis,
    new_id,
)
from flagstaff_server.services.ports import AccountRecord, UnitOfWork
from flagstaff_server.services.sessions import SignedIn, record_failed_sign_in, start_session
from flagstaff_server.services.sso_ports import AuthorizationStart, OidcClient, OidcClientConfig
from flagstaff_server.services.sso_settings import stored_settings

PENDING_SCOPE = "sign-in"
PENDING_LIFETIME = timedelta(minutes=10)
METHOD = "sso"


@dataclass(frozen=True, slots=True, kw_only=True)
class Started:
    """Where to send the browser, and the `state` it must bring back (set in a cookie too)."""

    url: str
    state: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Callback:
    """What the provider's redirect carried, and the state cookie of the browser it reached."""

    state: str | None
    code: str | None
    error: str | None
    browser_state: str | None
    client: str | None


def client_of(plane: ControlPlane) -> OidcClient:
    if plane.oidc is None:
        raise NotFound("single sign-on is not available in this process")
    return plane.oidc


def config_of(settings: SsoSettings) -> OidcClientConfig:
    return OidcClientConfig(
        issuer=settings.issuer,
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        scopes=settings.scopes,
    )


def start_sign_in(plane: ControlPlane, *, redirect_uri: str) -> Started:
    """A new sign-in: `NotFound` while SSO is off."""
    with plane.read() as uow:
        settings = stored_settings(uow)
    if not settings.enabled:
        raise NotFound("single sign-on is not enabled")
    start = AuthorizationStart(
        redirect_uri=redirect_uri,
        state=secrets.token_urlsafe(32),
        nonce=secrets.token_urlsafe(32),
        code_verifier=secrets.token_urlsafe(48),
    )
    url = client_of(plane).authorization_url(config_of(settings), start)
    now = plane.clock()
    # like a session, written without the epoch check: a sign-in changes no flag data
    with plane.store.unit_of_work() as uow:
        for stale in uow.sso.list(PENDING_SCOPE, PROJECT_WIDE):
            if stale.doc["expires"] <= epoch_millis(now):
                uow.sso.delete(PENDING_SCOPE, PROJECT_WIDE, stale.key)
        uow.sso.add(
            KeyedRecord(
                id=new_id(),
                project=PENDING_SCOPE,
                key=hash_secret(start.state),
                created=now,
                doc={
                    "nonce": start.nonce,
                    "codeVerifier": start.code_verifier,
                    "redirectUri": redirect_uri,
                    "expires": epoch_millis(now + PENDING_LIFETIME),
                },
            )
        )
    return Started(url=url, state=start.state)


def finish_sign_in(plane: ControlPlane, callback: Callback) -> SignedIn:
    """The session of the member the provider vouched for. Any failure (a callback not started
    in this browser, used twice or late, the provider's error, a refused ID token, a deactivated
    member) is audited as a failed sign-in and raised as `IdentityProviderError`."""
    throttle = plane.sign_in_throttle
    throttle.check(email=None, client=callback.client, now=plane.clock())
    email: str | None = None
    try:
        start = take_pending(plane, callback)
        with plane.read() as uow:
            settings = stored_settings(uow)
        if not settings.enabled:
            raise IdentityProviderError("single sign-on is not enabled")
        if callback.error:
            raise IdentityProviderError(f"the identity provider answered {callback.error!r}")
        if not callback.code:
            raise IdentityProviderError("the identity provider sent no code")
        claims = client_of(plane).redeem(config_of(settings), start, callback.code)
        identity = checked_identity(claims, settings)
        email = identity.email
        record, actor = sign_in_member(plane, identity, settings)
    except IdentityProviderError as exc:
        throttle.record_failure(email=None, client=callback.client, now=plane.clock())
        record_failed_sign_in(
            plane, method=METHOD, email=email, client=callback.client, reason=exc.message
        )
        raise
    return start_session(plane, subject_of(record.id), actor, client=callback.client, method=METHOD)


def take_pending(plane: ControlPlane, callback: Callback) -> AuthorizationStart:
    """The sign-in this callback finishes, removed so it cannot be finished twice."""
    state, browser_state = callback.state or "", callback.browser_state or ""
    if not state or not hmac.compare_digest(state.encode(), browser_state.encode()):
        raise IdentityProviderError("this sign-in was not started in this browser; start again")
    with plane.store.unit_of_work() as uow:
        pending = uow.sso.get(PENDING_SCOPE, PROJECT_WIDE, hash_secret(state))
        if pending is not None:
            uow.sso.delete(PENDING_SCOPE, PROJECT_WIDE, pending.key)
    if pending is None or pending.doc["expires"] <= epoch_millis(plane.clock()):
        raise IdentityProviderError("unknown, used or expired sign-in; start again")
    return AuthorizationStart(
        redirect_uri=pending.doc["redirectUri"],
        state=state,
        nonce=pending.doc["nonce"],
        code_verifier=pending.doc["codeVerifier"],
    )


def checked_identity(claims: Mapping[str, Any], settings: SsoSettings) -> Identity:
    try:
        return identity_of(claims, settings.groups_claim)
    except ValidationError as exc:
        raise IdentityProviderError(exc.message) from exc


def sso_subject(identity: Identity) -> str:
    return f"{identity.issuer} {identity.subject}"


def find_member(uow: UnitOfWork, identity: Identity) -> AccountRecord | None:
    """The member this identity signed in as before, else the member with its email (linked on
    first sign-in: the provider vouches for the address)."""
    subject = sso_subject(identity)
    for record in uow.accounts.list():
        if record.doc.get("ssoSubject") == subject:
            return record
    by_email = uow.accounts.find_by_email(identity.email.strip().lower())
    if by_email is not None and by_email.doc.get("ssoSubject") not in (None, subject):
        raise IdentityProviderError("this email belongs to another single sign-on identity")
    return by_email


def sign_in_member(
    plane: ControlPlane, identity: Identity, settings: SsoSettings
) -> tuple[AccountRecord, Actor]:
    """Create or link the member, sync their mapped teams, and return them as they now are."""
    email = members.normalized_email_at(identity.email, "/email")
    with plane.read() as uow:
        found = find_member(uow, identity)
    member_id = found.id if found is not None else new_id()
    if found is not None and not is_active(found):
        raise IdentityProviderError("this member is deactivated")
    as_member = Actor(token_id=subject_of(member_id), name=email, role="reader")
    with plane.write(as_member) as tx:
        record = tx.uow.accounts.get(member_id)
        if record is None:
            record = create_member(tx, member_id, email, identity, settings)
        else:
            record = link_member(tx, record, identity)
        sync_teams(tx, record.id, identity.groups, settings.group_teams)
        return record, actor_of(tx.uow, record)


def create_member(
    tx: Transaction, member_id: str, email: str, identity: Identity, settings: SsoSettings
) -> AccountRecord:
    first, _, last = identity.name.partition(" ")
    record = AccountRecord(
        id=member_id,
        email=email,
        role=FIXED_ROLE[settings.default_role],  # type: ignore[arg-type]
        password_hash="",
        created=tx.now,
        doc={
            "firstName": first,
            "lastName": last,
            "baseRole": settings.default_role,
            "customRoles": [],
            "createdBy": tx.actor.token_id,
            "ssoSubject": sso_subject(identity),
        },
    )
    tx.uow.accounts.add(record)
    members.audit(
        tx,
        "createMember",
        record.id,
        after=members.present(tx.uow, record),
        comment="created at their first single sign-on",
    )
    return record


def link_member(tx: Transaction, record: AccountRecord, identity: Identity) -> AccountRecord:
    """Remember the identity; a pending invitation is fulfilled by signing in."""
    doc = {
        key: value
        for key, value in record.doc.items()
        if key not in ("inviteHash", "inviteExpires")
    }
    doc["ssoSubject"] = sso_subject(identity)
    if doc == record.doc:
        return record
    linked = replace(record, doc=doc)
    tx.uow.accounts.replace(linked)
    members.audit(
        tx,
        "updateMember",
        record.id,
        before=members.present(tx.uow, record),
        after=members.present(tx.uow, linked),
        comment="linked to their single sign-on identity",
    )
    return linked


def sync_teams(
    tx: Transaction, member_id: str, groups: tuple[str, ...], group_teams: Mapping[str, str]
) -> None:
    """Join the teams the member's groups map to, leave mapped teams they no longer have; a
    mapped team deleted since is passed over. Each change is a team audit entry."""
    current = [team.key for team in teams_of(tx.uow, member_id)]
    join, leave = team_changes(group_teams, groups, current)
    for key in sorted(join | leave):
        team = tx.uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, key)
        if team is None:
            continue
        ids = [m for m in team.doc["memberIDs"] if m != member_id]
        if key in join:
            ids.append(member_id)
        changed = replace(team, version=team.version + 1, doc={**team.doc, "memberIDs": ids})
        tx.uow.teams.replace(changed, team.version)
        tx.audit(
            kind="team",
            resource=f"team/{key}",
            action="updateTeamMembers",
            comment=f"single sign-on groups: member {member_id} "
            + ("joined" if key in join else "left"),
            before={"memberIDs": team.doc["memberIDs"]},
            after={"memberIDs": ids},
        )
