"""Who is calling and what they may do: access-token authentication, roles and scopes.

Owns the role order (reader < writer < admin), the secret format and its hashing. It knows nothing
of HTTP; `flagstaff_server.http.api.access` turns a header into a call to `authenticate`. A token
may carry an inline policy (LaunchDarkly's `inlineRole`): then `authorize_accesses` decides each
request by it, within the token's role as a ceiling (docs/access.md).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from flagstaff_server.domain.custom_role import role_policy
from flagstaff_server.domain.policy import Resource, parse_statements
from flagstaff_server.domain.role_policy import Caller, Grant, RolePolicy, decide
from flagstaff_server.errors import Forbidden, Unauthorized
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.member_access import (
    ACCOUNT_SUBJECT_PREFIX,
    member_grant,
    member_of_subject,
)
from flagstaff_server.services.ports import AccountRecord, Role, TokenRecord, UnitOfWork

ROLE_RANK: Mapping[Role, int] = {"reader": 0, "writer": 1, "admin": 2}

TOKEN_PREFIX = "api-"
# SDK keys and mobile keys carry these prefixes; they open delivery, never management.
DELIVERY_KEY_PREFIXES = ("sdk-", "mob-")

ADMIN_TOKEN_ID = "admin-token"
ADMIN_TOKEN_NAME = "FLAGSTAFF_ADMIN_TOKEN"
SCIM_PURPOSE = "scim"
"""`doc["purpose"]` of a SCIM token: it opens `/scim/v2` only (`services.scim_access`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Actor:
    """The authenticated caller, as audit entries name it."""

    token_id: str
    name: str
    role: Role
    project: str | None = None
    environment: str | None = None
    approval_bypass: bool = False
    """A token created with `bypassApprovals` (docs/workflows.md, "Who may bypass")."""
    grants: tuple[Grant, ...] | None = None
    """When set, every request is decided by LaunchDarkly's policies: each grant must allow
    (a token's inline policy or custom roles, then its role as the ceiling; a member's roles).
    None: the fixed role and scope rules below decide alone."""

    policy_only: bool = False
    """A member (signed in, not through a token): its grants alone decide, so the fixed role
    checks pass and every route asks the member's policies (`role` is then only shown)."""
    member_id: str | None = None
    """The member behind the caller: the signed-in member, or the owner of a personal token."""

    @property
    def has_policy(self) -> bool:
        return self.grants is not None

    @property
    def is_scoped(self) -> bool:
        return self.project is not None

    @property
    def bypasses_approvals(self) -> bool:
        """Whether this caller may change what an environment requiring approval serves without
        an approval request: the admin role (as LaunchDarkly's admins and owners), or a token
        made to."""
        if self.grants is not None:
            return self.approval_bypass
        return self.role == "admin" or self.approval_bypass

    def may(
        self, role: Role, *, project: str | None = None, environment: str | None = None
    ) -> bool:
        """Whether this caller holds `role` for a resource in `project`/`environment`.

        A resource with no project is account-wide (projects list, tokens, audit log): scoped
        tokens may read it, but only unscoped tokens may change it. Likewise an environment-scoped
        token may read project-wide resources but change only its environment's.
        """
        if self.policy_only:
            return True
        if ROLE_RANK[self.role] < ROLE_RANK[role]:
            return False
        if self.project is None:
            return True
        if project is None:
            return role == "reader"
        if project != self.project:
            return False
        if self.environment is None:
            return True
        if environment is None:
            return role == "reader"
        return environment == self.environment


# The server itself, for what it does unasked at first start (demo project, first admin token).
SYSTEM = Actor(token_id="flagstaff", name="Flagstaff (first start)", role="admin")
# The worker stepping progressive and guarded rollouts that someone allowed to start them.
RELEASES = Actor(token_id="flagstaff-releases", name="Flagstaff automated release", role="admin")


def authorize(
    actor: Actor, role: Role, *, project: str | None = None, environment: str | None = None
) -> None:
    """Raise `Forbidden` unless `actor` may act with `role` on the resource."""
    if actor.may(role, project=project, environment=environment):
        return
    if ROLE_RANK[actor.role] < ROLE_RANK[role]:
        raise Forbidden(f"this needs the {role} role; the access token has the {actor.role} role")
    where = f"project {actor.project!r}"
    if actor.environment is not None:
        where += f", environment {actor.environment!r}"
    raise Forbidden(f"the access token is limited to {where}")


def caller_of(actor: Actor) -> Caller:
    """The grants that must all allow for `actor`."""
    return Caller(grants=actor.grants or ())


def authorize_accesses(actor: Actor, accesses: Iterable[tuple[str, Resource]]) -> None:
    """Raise `Forbidden` naming the first (action, resource) the actor's policy refuses. Only
    actors carrying a policy are asked; the others keep the role and scope rules above."""
    if actor.grants is None:
        return
    decision = decide(caller_of(actor), accesses)
    if decision.allowed:
        return
    if not decision.action:
        raise Forbidden("this request names no action a policy could allow")
    raise Forbidden(
        f"the caller's roles do not allow {decision.action} on {decision.resource}",
        action=decision.action,
        resource=decision.resource,
    )


def new_secret() -> str:
    return f"{TOKEN_PREFIX}{uuid.uuid4()}"


def hash_secret(secret: str) -> str:
    """SHA-256 of the secret. Secrets are 122 random bits, so a fast unsalted hash is enough: there
    is no dictionary to try, and a slow password hash would cost every API request."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_of(authorization: str | None) -> str:
    """The token in an `Authorization` header: the raw token, or `Bearer <token>`."""
    if authorization is None or not authorization.strip():
        raise Unauthorized("an access token is required in the Authorization header")
    value = authorization.strip()
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() == "bearer":
        value = rest.strip()
    return value


def authenticate(uow: UnitOfWork, authorization: str | None, *, admin_token: str | None) -> Actor:
    """The actor behind an `Authorization` header, or `Unauthorized`."""
    screened = screen_secret(authorization, admin_token=admin_token)
    if isinstance(screened, Actor):
        return screened
    return stored_caller(uow, screened)


def screen_secret(authorization: str | None, *, admin_token: str | None) -> Actor | str:
    """What an `Authorization` header says without the store: the admin token's actor, else the
    hash of the secret to look up; `Unauthorized` for an SDK or mobile key."""
    secret = secret_of(authorization)
    if secret.startswith(DELIVERY_KEY_PREFIXES):
        raise Unauthorized(
            "SDK and mobile keys do not open the management API; use an access token"
        )
    if admin_token is not None and hmac.compare_digest(secret.encode(), admin_token.encode()):
        return Actor(token_id=ADMIN_TOKEN_ID, name=ADMIN_TOKEN_NAME, role="admin")
    return hash_secret(secret)


def stored_caller(uow: UnitOfWork, secret_hash: str) -> Actor:
    """The actor of the live access token with this secret hash, or `Unauthorized`."""
    record = uow.tokens.find_by_secret_hash(secret_hash)
    if record is None or record.revoked is not None:
        raise Unauthorized("unknown or revoked access token")
    if record.doc.get("purpose") == SCIM_PURPOSE:
        raise Unauthorized("a SCIM token opens only /scim/v2, not the management API")
    return token_actor(uow, record)


def token_actor(uow: UnitOfWork, record: TokenRecord) -> Actor:
    """The caller an access token speaks for, its custom roles read now (an edited role
    applies on the next request)."""
    return Actor(
        token_id=record.id,
        name=record.name,
        role=record.role,
        project=record.project,
        environment=record.environment,
        approval_bypass=record.doc.get("bypassApprovals") is True,
        grants=token_grants(uow, record),
        member_id=owner.id if (owner := owner_of(uow, record)) is not None else None,
    )


def owner_of(uow: UnitOfWork, record: TokenRecord) -> AccountRecord | None:
    return member_of_subject(uow, str(record.doc.get("ownerId", "")))


def token_grants(uow: UnitOfWork, record: TokenRecord) -> tuple[Grant, ...] | None:
    """A token with an inline policy or custom roles: those (most permissive among them), within
    its role as the ceiling; a member's personal token also within the member's current grant.
    None for a token with none of these (the fixed role and scope rules decide)."""
    own = [role_policy(role.doc) for role in token_roles(uow, record)]
    statements = record.doc.get("inlineRole")
    if statements is not None:
        inline = parse_statements(statements, path="/inlineRole", actions=None)
        own.append(RolePolicy(key="inlineRole", statements=inline))
    owner = str(record.doc.get("ownerId", ""))
    member: tuple[Grant, ...] = ()
    if owner.startswith(ACCOUNT_SUBJECT_PREFIX):
        found = member_of_subject(uow, owner)
        member = (Grant() if found is None else member_grant(uow, found),)
    ceiling = Grant(base_role=record.role)
    if own or record.doc.get("customRoleIds"):
        return (Grant(custom_roles=tuple(own)), ceiling, *member)
    if member:
        return (ceiling, *member)
    return None


def token_roles(uow: UnitOfWork, record: TokenRecord) -> list[KeyedRecord]:
    """The stored custom roles the token names by `_id` (a role cannot be deleted while a live
    token holds it; one missing all the same gives nothing)."""
    wanted = set(record.doc.get("customRoleIds", []))
    if not wanted:
        return []
    return [role for role in uow.custom_roles.list(ACCOUNT_WIDE, PROJECT_WIDE) if role.id in wanted]
