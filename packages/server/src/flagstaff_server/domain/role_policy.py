"""Who may do what: the built-in base roles as policies, how a member's base role, custom roles
and team roles combine (LaunchDarkly's rules), and the decision for a set of (action, resource)
pairs. Pure: builds on `domain.policy` and reads no store.

- A base role is a fixed policy: `reader` may view projects, `writer` may do anything inside
  projects, `admin` and `owner` anything at all, `no_access` nothing.
- A member's own custom roles *replace* the base role; team roles are *added* to whatever the
  member has. Across the resulting policies the most permissive wins (`policy.permitted`).
- A token speaks with its own policies (its role, custom roles or inline policy) but never beyond
  its member's: every grant in a `Caller` must allow.
- A request needs every (action, resource) it implies; the first refused one is the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from flagstaff_server.domain.policy import (
    Resource,
    ResourcePart,
    RoleAttributes,
    Statement,
    allows,
    parse_statements,
)
from flagstaff_server.domain.policy_catalog import NAMELESS_TYPES, RESOURCE_PATHS

BaseRole = Literal["no_access", "reader", "writer", "admin", "owner"]
BASE_ROLES: tuple[BaseRole, ...] = ("no_access", "reader", "writer", "admin", "owner")


def every_resource(prefix: str | None = None) -> list[str]:
    """A specifier for each known resource path (those under `proj` when prefix is 'proj')."""
    return sorted(
        ":".join(kind if kind in NAMELESS_TYPES else f"{kind}/*" for kind in path)
        for path in RESOURCE_PATHS
        if prefix is None or path[0] == prefix
    )


BASE_POLICIES: Mapping[BaseRole, tuple[Statement, ...]] = {
    "no_access": (),
    "reader": parse_statements(
        [{"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]}]
    ),
    "writer": parse_statements(
        [{"effect": "allow", "actions": ["*"], "resources": every_resource("proj")}]
    ),
    "admin": parse_statements(
        [{"effect": "allow", "actions": ["*"], "resources": every_resource()}]
    ),
    "owner": parse_statements(
        [{"effect": "allow", "actions": ["*"], "resources": every_resource()}]
    ),
}
"""LaunchDarkly's base roles in its own policy language, so one evaluator serves all roles."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RolePolicy:
    """One role's statements with the role attributes its `${roleAttribute/...}` names read (a
    member's or a team's)."""

    key: str
    statements: tuple[Statement, ...]
    attributes: RoleAttributes = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """What one principal (a member, or a token on its own) holds."""

    base_role: BaseRole = "no_access"
    custom_roles: tuple[RolePolicy, ...] = ()
    """Directly assigned: when any is given they replace the base role."""
    team_roles: tuple[RolePolicy, ...] = ()
    """Through teams: always added."""
    attributes: RoleAttributes = field(default_factory=dict)


def policies_of(grant: Grant) -> tuple[RolePolicy, ...]:
    """The policies that speak for `grant`, by LaunchDarkly's combination rules."""
    own = grant.custom_roles or (
        RolePolicy(
            key=grant.base_role,
            statements=BASE_POLICIES[grant.base_role],
            attributes=grant.attributes,
        ),
    )
    return (*own, *grant.team_roles)


def grant_allows(grant: Grant, action: str, resource: Resource) -> bool:
    """Most permissive across the grant's policies; within each, deny wins."""
    return any(
        allows(role.statements, action, resource, role.attributes) for role in policies_of(grant)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Caller:
    """Every grant must allow: a token's own, then the member's it was made by (a personal
    token never exceeds its member)."""

    grants: tuple[Grant, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    allowed: bool
    action: str
    resource: str
    """As text, for a 403 body: `proj/shop:env/production:flag/checkout`."""


def decide(caller: Caller, accesses: Iterable[tuple[str, Resource]]) -> Decision:
    """Allowed when every (action, resource) is; otherwise the first refused one. No accesses
    at all is refused, so a route that forgot to name its action cannot pass."""
    last: tuple[str, Resource] | None = None
    for action, resource in accesses:
        last = (action, resource)
        if not caller.grants or not all(
            grant_allows(grant, action, resource) for grant in caller.grants
        ):
            return Decision(allowed=False, action=action, resource=str(resource))
    if last is None:
        return Decision(allowed=False, action="", resource="")
    return Decision(allowed=True, action=last[0], resource=str(last[1]))


# resources -------------------------------------------------------------------------------------


def part(
    kind: str,
    name: str,
    *,
    tags: Iterable[str] = (),
    properties: Mapping[str, str | bool] | None = None,
) -> ResourcePart:
    return ResourcePart(
        type=kind, name=name, tags=frozenset(tags), properties=dict(properties or {})
    )


def project_resource(project: str, *, tags: Sequence[str] = ()) -> Resource:
    return Resource((part("proj", project, tags=tags),))


def environment_resource(
    project: str,
    environment: str,
    *,
    project_tags: Sequence[str] = (),
    environment_tags: Sequence[str] = (),
    critical: bool = False,
) -> Resource:
    return Resource(
        (
            part("proj", project, tags=project_tags),
            part("env", environment, tags=environment_tags, properties={"critical": critical}),
        )
    )


def in_project(
    kind: str,
    key: str,
    project: str,
    environment: str,
    *,
    tags: Sequence[str] = (),
    project_tags: Sequence[str] = (),
    environment_tags: Sequence[str] = (),
    critical: bool = False,
) -> Resource:
    """A flag, segment or experiment of one environment: `proj/p:env/e:flag/k`. Environment '*'
    stands for every environment at once (a flag-wide change such as a rename), which only an
    `env/*` glob matches: a role limited to production cannot rename a flag."""
    env = environment_resource(
        project,
        environment,
        project_tags=project_tags,
        environment_tags=environment_tags,
        critical=critical,
    )
    return Resource((*env.parts, part(kind, key, tags=tags)))


def account_resource(kind: str, name: str = "*") -> Resource:
    """An account-wide resource: `role/k`, `team/k`, `member/id`, `webhook/id`, `acct`."""
    return Resource((part(kind, name),))
