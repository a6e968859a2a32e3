"""LaunchDarkly's documented policy examples, each asked about (action, resource) triples with the
decision LaunchDarkly's docs give (role-policies, role-resources, role-actions pages, and the
role-assignment pages for how base, custom and team roles combine; see
`../shared/reference/launchdarkly-release-api.md` §2-§3). One row per triple."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.policy import (
    PROPERTY_PATTERN,
    Resource,
    ResourcePart,
    Statement,
    allows,
    parse_statements,
    split_outside_braces,
)
from flagstaff_server.domain.role_policy import Caller, Grant, RolePolicy, decide, grant_allows


def resource(text: str) -> Resource:
    """`proj/p;tag:env/e;tag,{critical:true}:flag/k;tag` as a concrete resource."""
    parts = []
    for piece in split_outside_braces(text, ":", path="/resource"):
        head, _, extra = piece.partition(";")
        kind, _, name = head.partition("/")
        tags, properties = set(), {}
        for item in split_outside_braces(extra, ",", path="/resource") if extra else []:
            found = PROPERTY_PATTERN.fullmatch(item)
            if found:
                properties[found.group(1)] = found.group(2) == "true"
            else:
                tags.add(item)
        parts.append(
            ResourcePart(type=kind, name=name or "*", tags=frozenset(tags), properties=properties)
        )
    return Resource(tuple(parts))


def statements(*given: dict[str, Any]) -> tuple[Statement, ...]:
    return parse_statements(list(given))


def allow(actions: list[str], resources: list[str]) -> dict[str, Any]:
    return {"effect": "allow", "actions": actions, "resources": resources}


def deny(actions: list[str], resources: list[str]) -> dict[str, Any]:
    return {"effect": "deny", "actions": actions, "resources": resources}


POLICIES: dict[str, tuple[Statement, ...]] = {
    # "allow all actions on all flags in the production environment"
    "production-flags": statements(allow(["*"], ["proj/*:env/production:flag/*"])),
    # "toggle flags only": updateOn on every flag, nothing else
    "toggle-only": statements(allow(["updateOn"], ["proj/*:env/*:flag/*"])),
    # "everything except production": allow all flags, deny production
    "not-production": statements(
        allow(["*"], ["proj/*:env/*:flag/*"]), deny(["*"], ["proj/*:env/production:flag/*"])
    ),
    # the same with notResources
    "not-production-negated": statements(
        {"effect": "allow", "actions": ["*"], "notResources": ["proj/*:env/production:flag/*"]}
    ),
    # "all flag actions but deleting": notActions
    "no-delete": statements(
        {"effect": "allow", "notActions": ["deleteFlag"], "resources": ["proj/*:env/*:flag/*"]}
    ),
    # flags tagged mobile in any project
    "mobile-flags": statements(allow(["*"], ["proj/*:env/*:flag/*;mobile"])),
    # every environment tagged qa_*
    "qa-environments": statements(allow(["*"], ["proj/*:env/*;qa_*:flag/*"])),
    # projects tagged mobile, their flags
    "mobile-projects": statements(allow(["*"], ["proj/*;mobile:env/*:flag/*"])),
    # critical environments denied, the rest allowed
    "not-critical": statements(
        allow(["*"], ["proj/*:env/*:flag/*"]), deny(["*"], ["proj/*:env/*;{critical:true}:flag/*"])
    ),
    # "update*" action globs
    "update-anything": statements(allow(["update*"], ["proj/*:env/*:flag/*"])),
    # one project's flags by name
    "default-project": statements(allow(["*"], ["proj/default:env/*:flag/*"])),
    # segments, not flags
    "segments": statements(allow(["*"], ["proj/*:env/*:segment/*"])),
    # role attributes: the member's projects
    "my-projects": statements(allow(["*"], ["proj/${roleAttribute/projects}:env/*:flag/*"])),
    # an allow and a deny of the same action on the same resource: deny wins
    "contradiction": statements(
        allow(["updateOn"], ["proj/*:env/*:flag/*"]), deny(["updateOn"], ["proj/*:env/*:flag/*"])
    ),
    # reviewers: may review and apply approval requests, not edit flags
    "reviewer": statements(
        allow(["reviewApprovalRequest", "applyApprovalRequest"], ["proj/*:env/*:flag/*"])
    ),
    # manage the account's roles and teams
    "role-admin": statements(allow(["*"], ["role/*", "team/*"])),
    # read projects only
    "viewer": statements(allow(["viewProject"], ["proj/*"])),
}

ATTRIBUTES = {"my-projects": {"projects": ["web", "shop"]}}

PROD = "proj/shop:env/production:flag/checkout"
TEST = "proj/shop:env/test:flag/checkout"

TABLE: list[tuple[str, str, str, bool]] = [
    ("production-flags", "updateOn", PROD, True),
    ("production-flags", "deleteFlag", PROD, True),
    ("production-flags", "updateOn", TEST, False),
    ("production-flags", "updateOn", "proj/shop:env/production:segment/beta", False),
    ("production-flags", "viewProject", "proj/shop", False),
    ("toggle-only", "updateOn", PROD, True),
    ("toggle-only", "updateOn", TEST, True),
    ("toggle-only", "updateRules", PROD, False),
    ("toggle-only", "updateTargets", TEST, False),
    ("not-production", "updateOn", TEST, True),
    ("not-production", "updateFallthrough", TEST, True),
    ("not-production", "updateOn", PROD, False),
    ("not-production", "deleteFlag", PROD, False),
    ("not-production-negated", "updateOn", TEST, True),
    ("not-production-negated", "updateOn", PROD, False),
    ("not-production-negated", "updateOn", "proj/shop", True),
    ("no-delete", "updateRules", PROD, True),
    ("no-delete", "createFlag", TEST, True),
    ("no-delete", "deleteFlag", PROD, False),
    ("mobile-flags", "updateOn", f"{PROD};mobile", True),
    ("mobile-flags", "updateOn", f"{PROD};mobile,beta", True),
    ("mobile-flags", "updateOn", PROD, False),
    ("mobile-flags", "updateOn", f"{PROD};web", False),
    ("qa-environments", "updateOn", "proj/shop:env/qa;qa_eu:flag/checkout", True),
    ("qa-environments", "updateOn", "proj/shop:env/production;prod:flag/checkout", False),
    ("qa-environments", "updateOn", TEST, False),
    ("mobile-projects", "updateRules", "proj/app;mobile:env/test:flag/x", True),
    ("mobile-projects", "updateRules", "proj/app;web:env/test:flag/x", False),
    (
        "not-critical",
        "updateOn",
        "proj/shop:env/production;{critical:true}:flag/checkout",
        False,
    ),
    ("not-critical", "updateOn", "proj/shop:env/test;{critical:false}:flag/checkout", True),
    ("update-anything", "updateOn", PROD, True),
    ("update-anything", "updateFlagVariations", PROD, True),
    ("update-anything", "createFlag", PROD, False),
    ("update-anything", "deleteFlag", PROD, False),
    ("default-project", "updateOn", "proj/default:env/production:flag/a", True),
    ("default-project", "updateOn", "proj/default-2:env/production:flag/a", False),
    ("segments", "updateIncluded", "proj/shop:env/production:segment/beta", True),
    ("segments", "updateOn", PROD, False),
    ("my-projects", "updateOn", PROD, True),
    ("my-projects", "updateOn", "proj/web:env/test:flag/x", True),
    ("my-projects", "updateOn", "proj/ops:env/test:flag/x", False),
    ("contradiction", "updateOn", PROD, False),
    ("reviewer", "reviewApprovalRequest", PROD, True),
    ("reviewer", "applyApprovalRequest", TEST, True),
    ("reviewer", "updateOn", PROD, False),
    ("reviewer", "createApprovalRequest", PROD, False),
    ("role-admin", "createRole", "role/release-manager", True),
    ("role-admin", "updateTeamMembers", "team/mobile", True),
    ("role-admin", "createMember", "member/abc", False),
    ("viewer", "viewProject", "proj/shop", True),
    ("viewer", "updateProjectName", "proj/shop", False),
    ("viewer", "updateOn", PROD, False),
    # a specifier names only its own type path: proj/* is not the flags inside it
    ("viewer", "viewProject", "proj/shop:env/production", False),
]


@pytest.mark.parametrize(("name", "action", "target", "expected"), TABLE)
def test_documented_policy_decision(name: str, action: str, target: str, expected: bool) -> None:
    decided = allows(POLICIES[name], action, resource(target), ATTRIBUTES.get(name))
    assert decided is expected


def test_the_table_holds_at_least_forty_triples() -> None:
    assert len(TABLE) >= 40
    assert {name for name, *_ in TABLE} == set(POLICIES)


def role(name: str) -> RolePolicy:
    return RolePolicy(key=name, statements=POLICIES[name], attributes=ATTRIBUTES.get(name, {}))


# How roles combine (role-assignment pages): (grant, action, resource, decision).
COMBINED: list[tuple[Grant, str, str, bool]] = [
    # base roles
    (Grant(base_role="reader"), "viewProject", "proj/shop", True),
    (Grant(base_role="reader"), "updateOn", PROD, False),
    (Grant(base_role="writer"), "updateOn", PROD, True),
    (Grant(base_role="writer"), "createSegment", "proj/shop:env/test:segment/s", True),
    (Grant(base_role="writer"), "createRole", "role/x", False),
    (Grant(base_role="writer"), "createMember", "member/x", False),
    (Grant(base_role="admin"), "createRole", "role/x", True),
    (Grant(base_role="owner"), "createMember", "member/x", True),
    (Grant(base_role="no_access"), "viewProject", "proj/shop", False),
    # a custom role replaces the base role: reader + toggle-only no longer views projects
    (Grant(base_role="reader", custom_roles=(role("toggle-only"),)), "updateOn", PROD, True),
    (
        Grant(base_role="writer", custom_roles=(role("toggle-only"),)),
        "updateRules",
        PROD,
        False,
    ),
    (
        Grant(base_role="reader", custom_roles=(role("toggle-only"),)),
        "viewProject",
        "proj/shop",
        False,
    ),
    # team roles are added to the base role
    (
        Grant(base_role="reader", team_roles=(role("toggle-only"),)),
        "viewProject",
        "proj/shop",
        True,
    ),
    (Grant(base_role="reader", team_roles=(role("toggle-only"),)), "updateOn", PROD, True),
    # no_access with team roles gets exactly the team roles
    (Grant(base_role="no_access", team_roles=(role("segments"),)), "updateOn", PROD, False),
    # across roles the most permissive wins: one role denies production, another allows it
    (
        Grant(custom_roles=(role("not-production"), role("production-flags"))),
        "updateOn",
        PROD,
        True,
    ),
    (
        Grant(custom_roles=(role("not-production"),), team_roles=(role("toggle-only"),)),
        "updateOn",
        PROD,
        True,
    ),
    (
        Grant(custom_roles=(role("not-production"),), team_roles=(role("toggle-only"),)),
        "deleteFlag",
        PROD,
        False,
    ),
]


@pytest.mark.parametrize(("grant", "action", "target", "expected"), COMBINED)
def test_documented_role_combination(
    grant: Grant, action: str, target: str, expected: bool
) -> None:
    assert grant_allows(grant, action, resource(target)) is expected


def test_a_token_never_exceeds_its_member() -> None:
    token = Grant(base_role="admin")
    member = Grant(base_role="reader")
    caller = Caller(grants=(token, member))

    refused = decide(caller, [("viewProject", resource("proj/shop")), ("updateOn", resource(PROD))])

    assert not refused.allowed
    assert (refused.action, refused.resource) == ("updateOn", PROD)
    assert decide(caller, [("viewProject", resource("proj/shop"))]).allowed


def test_a_request_naming_no_action_is_refused() -> None:
    assert not decide(Caller(grants=(Grant(base_role="owner"),)), []).allowed
