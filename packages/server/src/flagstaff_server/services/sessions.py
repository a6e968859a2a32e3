"""Browser sessions: signing in (with an email and password, or with an access token; single
sign-on is `services.sso`, which ends here too), finding
the caller behind a session cookie, the CSRF check on writes, and signing out.

The cookie holds 256 random bits; only their SHA-256 is stored (like access tokens, nothing to
guess). Each session also has a CSRF token the page sends in a header on every write: a
cross-site page can make the browser send the cookie, but it cannot read the token. It knows
nothing of HTTP; `flagstaff_server.http.api.access` and `http.api.sessions` do the headers.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, replace
from datetime import timedelta

from flagstaff_server.errors import Forbidden, Unauthorized
from flagstaff_server.services.access import (
    ADMIN_TOKEN_ID,
    Actor,
    authenticate,
    hash_secret,
    token_actor,
)
from flagstaff_server.services.accounts import ACCOUNT_ACTOR_PREFIX, actor_of
from flagstaff_server.services.member_access import is_active, member_of_subject
from flagstaff_server.services.password import decoy_hash, verify_password
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis
from flagstaff_server.services.ports import SessionRecord, UnitOfWork
from flagstaff_server.services.sso_settings import is_break_glass, stored_settings

# A session ends this long after sign-in, whatever happens in between.
SESSION_LIFETIME = timedelta(hours=12)
TOKEN_SUBJECT_PREFIX = "token:"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Who a failed sign-in is filed under in the audit log: nobody was recognised.
ANONYMOUS = Actor(token_id="anonymous", name="(not signed in)", role="reader")
SIGN_IN = "signIn"
FAILED_SIGN_IN = "signInFailed"


@dataclass(frozen=True, slots=True, kw_only=True)
class SignedIn:
    """A new session: `cookie` goes to the browser (once), `csrf_token` to the page."""

    cookie: str
    csrf_token: str
    actor: Actor
    lifetime: timedelta


def sign_in_resource(subject: str) -> str:
    """`account/<id>` or `token/<id>`, as the other audit entries of accounts and tokens."""
    if subject.startswith(ACCOUNT_ACTOR_PREFIX):
        return f"account/{subject.removeprefix(ACCOUNT_ACTOR_PREFIX)}"
    return f"token/{subject.removeprefix(TOKEN_SUBJECT_PREFIX)}"


def record_failed_sign_in(
    plane: ControlPlane,
    *,
    method: str,
    email: str | None,
    client: str | None,
    reason: str | None = None,
) -> None:
    """An audit entry for a refused sign-in: what was tried, from where and, when it says no
    more than the caller was told, why (never the secret)."""
    after = {"method": method, "email": email, "client": client}
    if reason is not None:
        after["reason"] = reason
    with plane.store.unit_of_work() as uow:
        Transaction(uow=uow, actor=ANONYMOUS, now=plane.clock()).audit(
            kind="account", resource="account/*", action=FAILED_SIGN_IN, after=after
        )


def start_session(
    plane: ControlPlane,
    subject: str,
    actor: Actor,
    *,
    client: str | None = None,
    method: str | None = None,
) -> SignedIn:
    """A new session, recorded in the audit log as a sign-in by `actor`. Like the session it is
    written without the epoch check of `plane.write`: signing in changes no flag data."""
    cookie = secrets.token_urlsafe(32)
    csrf_token = secrets.token_urlsafe(24)
    now = plane.clock()
    with plane.store.unit_of_work() as uow:
        Transaction(uow=uow, actor=actor, now=now).audit(
            kind="account",
            resource=sign_in_resource(subject),
            action=SIGN_IN,
            after={
                "method": method
                or ("password" if subject.startswith(ACCOUNT_ACTOR_PREFIX) else "token"),
                "client": client,
            },
        )
        uow.sessions.delete_expired(now)
        member = member_of_subject(uow, subject)
        if member is not None:
            uow.accounts.replace(replace(member, doc={**member.doc, "lastSeen": epoch_millis(now)}))
        uow.sessions.add(
            SessionRecord(
                id_hash=hash_secret(cookie),
                subject=subject,
                csrf_token=csrf_token,
                created=now,
                expires=now + SESSION_LIFETIME,
            )
        )
    return SignedIn(cookie=cookie, csrf_token=csrf_token, actor=actor, lifetime=SESSION_LIFETIME)


def sign_in_with_password(
    plane: ControlPlane, email: str, password: str, *, client: str | None = None
) -> SignedIn:
    """A session for the account; `Unauthorized` (without saying which part was wrong) when the
    email is unknown or the password does not match; `TooManyAttempts`, before any check, when
    the account or the client address has failed too often lately (see `sign_in_throttle`)."""
    throttle = plane.sign_in_throttle
    throttle.check(email=email, client=client, now=plane.clock())
    with plane.read() as uow:
        record = uow.accounts.find_by_email(email.strip().lower())
        if record is not None and (not is_active(record) or not record.password_hash):
            record = None  # deactivated, or invited and not yet joined
        actor = None if record is None else actor_of(uow, record)
        password_refused = (
            record is not None
            and stored_settings(uow).sso_required
            and not is_break_glass(uow, record.id)
        )
    if record is None:
        verify_password(password, decoy_hash())
    if record is None or actor is None or not verify_password(password, record.password_hash):
        throttle.record_failure(email=email, client=client, now=plane.clock())
        record_failed_sign_in(plane, method="password", email=email, client=client)
        raise Unauthorized("wrong email or password")
    if password_refused:
        # told only after the password matched: a stranger learns nothing about the account
        record_failed_sign_in(
            plane, method="password", email=email, client=client, reason="SSO is required"
        )
        raise Forbidden("this organisation signs in with single sign-on; use Sign in with SSO")
    throttle.record_success(email=email)
    subject = f"{ACCOUNT_ACTOR_PREFIX}{record.id}"
    return start_session(plane, subject, actor, client=client)


def sign_in_with_token(plane: ControlPlane, token: str, *, client: str | None = None) -> SignedIn:
    """A session acting as the access token (same role and scope) for as long as it is valid.
    Wrong tokens count against the client address like wrong passwords."""
    throttle = plane.sign_in_throttle
    throttle.check(email=None, client=client, now=plane.clock())
    try:
        with plane.read() as uow:
            actor = authenticate(uow, token, admin_token=plane.admin_token)
    except Unauthorized:
        throttle.record_failure(email=None, client=client, now=plane.clock())
        record_failed_sign_in(plane, method="token", email=None, client=client)
        raise
    subject = f"{TOKEN_SUBJECT_PREFIX}{actor.token_id}"
    return start_session(plane, subject, actor, client=client)


def subject_actor(uow: UnitOfWork, subject: str, *, admin_token: str | None) -> Actor:
    """The caller a session stands for, read afresh so a revoked token, a deleted account or a
    changed role takes effect on the next request."""
    if subject.startswith(ACCOUNT_ACTOR_PREFIX):
        account = uow.accounts.get(subject.removeprefix(ACCOUNT_ACTOR_PREFIX))
        if account is not None and is_active(account):
            return actor_of(uow, account)
    elif subject.startswith(TOKEN_SUBJECT_PREFIX):
        token_id = subject.removeprefix(TOKEN_SUBJECT_PREFIX)
        if token_id == ADMIN_TOKEN_ID and admin_token is not None:
            return authenticate(uow, admin_token, admin_token=admin_token)
        token = uow.tokens.get(token_id)
        if token is not None and token.revoked is None:
            return token_actor(uow, token)
    raise Unauthorized("the session has ended; sign in again")


def find_session(plane: ControlPlane, uow: UnitOfWork, cookie: str) -> SessionRecord:
    session = uow.sessions.get(hash_secret(cookie))
    if session is None or session.expires <= plane.clock():
        raise Unauthorized("the session has ended; sign in again")
    return session


def session_actor(
    plane: ControlPlane,
    uow: UnitOfWork,
    cookie: str,
    *,
    method: str,
    csrf_header: str | None,
) -> tuple[Actor, SessionRecord]:
    """The caller behind a session cookie. A request that may change something (any method but
    GET, HEAD, OPTIONS) must carry the session's CSRF token, else `Forbidden`."""
    session = find_session(plane, uow, cookie)
    actor = subject_actor(uow, session.subject, admin_token=plane.admin_token)
    if method.upper() not in SAFE_METHODS and not (
        csrf_header is not None
        and hmac.compare_digest(csrf_header.encode(), session.csrf_token.encode())
    ):
        raise Forbidden(
            "a write with a session cookie needs the session's CSRF token in X-CSRF-Token"
        )
    return actor, session


def live_session(plane: ControlPlane, cookie: str | None) -> tuple[Actor, SessionRecord] | None:
    """The caller behind `cookie` when it names a live session, else None (no cookie, expired,
    signed out, or its account or token gone): the web UI's "am I signed in?" question, for which
    signed out is an answer, not an error."""
    if not cookie:
        return None
    with plane.read() as uow:
        try:
            return session_actor(plane, uow, cookie, method="GET", csrf_header=None)
        except Unauthorized:
            return None


def sign_out(plane: ControlPlane, cookie: str) -> None:
    with plane.store.unit_of_work() as uow:
        uow.sessions.delete(hash_secret(cookie))
