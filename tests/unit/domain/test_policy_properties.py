"""Properties of policy evaluation (`domain.policy`, `domain.role_policy`): within one role an
applying deny always wins, whatever else the role allows; adding a role (a team role, or a custom
role beside others) never takes access away; a policy's decision ignores statement order."""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.policy import (
    Resource,
    ResourcePart,
    allows,
    parse_statements,
    permitted,
)
from flagstaff_server.domain.role_policy import BASE_ROLES, Grant, RolePolicy, grant_allows
from hypothesis import assume, given
from hypothesis import strategies as st

ACTIONS = ["updateOn", "updateRules", "createFlag", "deleteFlag", "updateName", "viewProject"]
ACTION_PATTERNS = [*ACTIONS, "*", "update*", "*Flag"]
SPECIFIERS = [
    "proj/*",
    "proj/shop",
    "proj/*;mobile",
    "proj/*:env/*",
    "proj/*:env/*:flag/*",
    "proj/*:env/production:flag/*",
    "proj/shop:env/*:flag/check*",
    "proj/*:env/*;qa_*:flag/*",
    "proj/*:env/*;{critical:true}:flag/*",
    "proj/*:env/*:flag/*;mobile",
    "proj/${roleAttribute/projects}:env/*:flag/*",
    "proj/*:env/*:segment/*",
]

names = st.sampled_from(["shop", "web", "ops"])
tag_sets = st.frozensets(st.sampled_from(["mobile", "qa_eu", "web"]), max_size=2)


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    project = ResourcePart(type="proj", name=draw(names), tags=draw(tag_sets))
    depth = draw(st.integers(1, 3))
    if depth == 1:
        return Resource((project,))
    environment = ResourcePart(
        type="env",
        name=draw(st.sampled_from(["production", "test", "qa"])),
        tags=draw(tag_sets),
        properties={"critical": draw(st.booleans())},
    )
    if depth == 2:
        return Resource((project, environment))
    kind = draw(st.sampled_from(["flag", "segment"]))
    key = draw(st.sampled_from(["checkout", "banner"]))
    return Resource((project, environment, ResourcePart(type=kind, name=key, tags=draw(tag_sets))))


@st.composite
def statement_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"effect": draw(st.sampled_from(["allow", "deny"]))}
    action_list = draw(st.lists(st.sampled_from(ACTION_PATTERNS), min_size=1, max_size=3))
    body["notActions" if draw(st.booleans()) else "actions"] = action_list
    specifiers = draw(st.lists(st.sampled_from(SPECIFIERS), min_size=1, max_size=3))
    body["notResources" if draw(st.booleans()) else "resources"] = specifiers
    return body


policies = st.lists(statement_bodies(), max_size=5)
attributes = st.fixed_dictionaries({"projects": st.lists(names, max_size=2)})


def role_policies() -> st.SearchStrategy[RolePolicy]:
    return st.builds(
        lambda bodies, given_attributes: RolePolicy(
            key="r", statements=parse_statements(bodies), attributes=given_attributes
        ),
        policies,
        attributes,
    )


def grants() -> st.SearchStrategy[Grant]:
    return st.builds(
        lambda base, custom, team: Grant(
            base_role=base, custom_roles=tuple(custom), team_roles=tuple(team)
        ),
        st.sampled_from(BASE_ROLES),
        st.lists(role_policies(), max_size=2),
        st.lists(role_policies(), max_size=2),
    )


@given(policies, st.sampled_from(ACTIONS), resources(), attributes, st.integers(0, 5))
def test_an_applying_deny_wins_within_a_role(
    bodies: list[dict[str, Any]],
    action: str,
    resource: Resource,
    given_attributes: dict[str, list[str]],
    at: int,
) -> None:
    # a deny that names this very action and resource, put anywhere among the statements
    exact = ":".join(f"{part.type}/{part.name}" for part in resource.parts)
    denial = {"effect": "deny", "actions": [action], "resources": [exact]}
    everything = {"effect": "allow", "actions": ["*"], "notResources": ["acct"]}
    statements = parse_statements([*bodies[:at], denial, everything, *bodies[at:]])

    assert not allows(statements, action, resource, given_attributes)


@given(policies, st.sampled_from(ACTIONS), resources(), attributes, st.randoms())
def test_statement_order_does_not_change_the_decision(
    bodies: list[dict[str, Any]],
    action: str,
    resource: Resource,
    given_attributes: dict[str, list[str]],
    shuffler: Any,
) -> None:
    shuffled = list(bodies)
    shuffler.shuffle(shuffled)
    assert allows(parse_statements(bodies), action, resource, given_attributes) == allows(
        parse_statements(shuffled), action, resource, given_attributes
    )


@given(st.lists(policies, max_size=3), policies, st.sampled_from(ACTIONS), resources())
def test_adding_a_policy_never_removes_access(
    held: list[list[dict[str, Any]]],
    extra: list[dict[str, Any]],
    action: str,
    resource: Resource,
) -> None:
    before = [parse_statements(bodies) for bodies in held]
    if permitted(before, action, resource):
        assert permitted([*before, parse_statements(extra)], action, resource)


@given(grants(), role_policies(), st.sampled_from(ACTIONS), resources())
def test_adding_a_team_role_never_removes_access(
    grant: Grant, extra: RolePolicy, action: str, resource: Resource
) -> None:
    wider = Grant(
        base_role=grant.base_role,
        custom_roles=grant.custom_roles,
        team_roles=(*grant.team_roles, extra),
    )
    if grant_allows(grant, action, resource):
        assert grant_allows(wider, action, resource)


@given(grants(), role_policies(), st.sampled_from(ACTIONS), resources())
def test_adding_a_custom_role_beside_others_never_removes_access(
    grant: Grant, extra: RolePolicy, action: str, resource: Resource
) -> None:
    # the first custom role replaces the base role (LaunchDarkly's rule); later ones only add
    assume(grant.custom_roles)
    wider = Grant(
        base_role=grant.base_role,
        custom_roles=(*grant.custom_roles, extra),
        team_roles=grant.team_roles,
    )
    if grant_allows(grant, action, resource):
        assert grant_allows(wider, action, resource)
