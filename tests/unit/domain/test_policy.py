"""LaunchDarkly's policy language (`domain.policy`): resource specifiers name exactly their own
type path, with globs, tags (all of them), property selectors and role attributes; statements
are checked field by field with JSON pointers; within a policy deny wins and nothing is allowed
by default; across policies the most permissive wins."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.policy import (
    Resource,
    ResourcePart,
    Statement,
    allows,
    allows_any,
    parse_resource,
    parse_specifier,
    parse_statements,
    permitted,
    specifier_matches,
    statement_json,
)
from flagstaff_server.errors import ValidationError


def flag(
    project: str = "shop",
    env: str = "production",
    key: str = "checkout",
    *,
    project_tags: frozenset[str] = frozenset(),
    env_tags: frozenset[str] = frozenset(),
    flag_tags: frozenset[str] = frozenset(),
    critical: bool = False,
) -> Resource:
    return Resource(
        (
            ResourcePart(type="proj", name=project, tags=project_tags),
            ResourcePart(type="env", name=env, tags=env_tags, properties={"critical": critical}),
            ResourcePart(type="flag", name=key, tags=flag_tags),
        )
    )


def matches(specifier: str, resource: Resource, **attributes: list[str]) -> bool:
    return specifier_matches(parse_specifier(specifier, path="/r"), resource, attributes)


def policy(*statements: dict[str, Any]) -> tuple[Statement, ...]:
    return parse_statements(list(statements))


def test_a_specifier_names_only_resources_of_its_own_type_path() -> None:
    resource = flag()
    assert matches("proj/*:env/*:flag/*", resource)
    assert matches("proj/shop:env/production:flag/checkout", resource)
    assert not matches("proj/*", resource)
    assert not matches("proj/*:env/*", resource)
    assert not matches("proj/*:env/*:segment/*", resource)
    assert matches("proj/*", parse_resource("proj/shop"))


def test_names_are_globs_where_only_the_star_is_special() -> None:
    assert matches("proj/*:env/prod*:flag/*", flag())
    assert matches("proj/*:env/*tion:flag/check*t", flag())
    assert not matches("proj/*:env/test:flag/*", flag())
    assert not matches("proj/*:env/prod?ction:flag/*", flag())
    assert matches("proj/*:env/*:flag/a.b", flag(key="a.b"))
    assert not matches("proj/*:env/*:flag/a.b", flag(key="axb"))


def test_every_tag_of_a_specifier_must_be_on_the_resource() -> None:
    tagged = flag(flag_tags=frozenset({"mobile", "beta"}))
    assert matches("proj/*:env/*:flag/*;mobile", tagged)
    assert matches("proj/*:env/*:flag/*;mobile,beta", tagged)
    assert not matches("proj/*:env/*:flag/*;mobile,web", tagged)
    assert not matches("proj/*:env/*:flag/*;mobile", flag())
    # tags may be globs, at any level
    assert matches("proj/*:env/*;qa_*:flag/*", flag(env_tags=frozenset({"qa_eu"})))
    assert not matches("proj/*:env/*;qa_*:flag/*", flag(env_tags=frozenset({"prod"})))
    assert matches("proj/*;mobile:env/*:flag/*", flag(project_tags=frozenset({"mobile"})))


def test_a_property_selector_compares_the_resource_property() -> None:
    assert matches("proj/*:env/*;{critical:true}:flag/*", flag(critical=True))
    assert not matches("proj/*:env/*;{critical:true}:flag/*", flag(critical=False))
    assert matches("proj/*:env/*;{critical:false}:flag/*", flag(critical=False))


def test_role_attributes_stand_for_each_of_their_values() -> None:
    spec = "proj/${roleAttribute/projects}:env/*:flag/*"
    assert matches(spec, flag(project="shop"), projects=["web", "shop"])
    assert not matches(spec, flag(project="shop"), projects=["web"])
    # an attribute the caller does not have names nothing
    assert not matches(spec, flag(project="shop"))


def test_the_account_has_no_name() -> None:
    assert matches("acct", parse_resource("acct"))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "non-empty"),
        ("proj", "needs a name"),
        ("proj/*:environment/*", "no known resource type"),
        ("flag/*", "no known resource type"),
        ("proj/*:env/*:flag/*;", "after ';'"),
        ("proj/*;a;b", "more than one ';'"),
        ("proj/{critical:true", "unbalanced"),
        ("proj/a b", "a name is"),
        ("proj/", "a name is"),
        ("proj/*:env/*;{critical:}:flag/*", "after ';'"),
        ("/x", "no resource type"),
    ],
)
def test_a_malformed_specifier_is_refused_saying_why(text: str, problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_specifier(text, path="/statements/0/resources/0")
    assert problem in caught.value.message
    assert caught.value.path == "/statements/0/resources/0"


def test_statements_round_trip_to_launchdarkly_json() -> None:
    given = [
        {"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/production:flag/*"]},
        {"effect": "deny", "notActions": ["update*"], "notResources": ["proj/*"]},
    ]
    assert [statement_json(s) for s in parse_statements(given)] == given
    assert parse_statements(None) == ()
    # an empty list beside its negation is accepted, as LaunchDarkly does
    (lenient,) = parse_statements(
        [{"effect": "allow", "actions": [], "notActions": ["deleteFlag"], "resources": ["proj/*"]}]
    )
    assert lenient.not_actions == ("deleteFlag",)


@pytest.mark.parametrize(
    ("statements", "path", "problem"),
    [
        ({"effect": "allow"}, "/statements", "array"),
        ([[]], "/statements/0", "object"),
        (
            [{"effect": "permit", "actions": ["*"], "resources": ["proj/*"]}],
            "/statements/0/effect",
            "allow",
        ),
        ([{"effect": "allow", "resources": ["proj/*"]}], "/statements/0/actions", "needs actions"),
        (
            [{"effect": "allow", "actions": ["*"], "notActions": ["x*"], "resources": ["proj/*"]}],
            "/statements/0/notActions",
            "not both",
        ),
        ([{"effect": "allow", "actions": ["*"]}], "/statements/0/resources", "needs resources"),
        (
            [{"effect": "allow", "actions": ["turnOnFlag"], "resources": ["proj/*"]}],
            "/statements/0/actions/0",
            "unknown action 'turnOnFlag'",
        ),
        (
            [{"effect": "allow", "actions": ["*", "zap*"], "resources": ["proj/*"]}],
            "/statements/0/actions/1",
            "matches no action",
        ),
        (
            [{"effect": "allow", "actions": [7], "resources": ["proj/*"]}],
            "/statements/0/actions/0",
            "non-empty string",
        ),
        (
            [{"effect": "allow", "actions": "*", "resources": ["proj/*"]}],
            "/statements/0/actions",
            "array",
        ),
        (
            [{"effect": "allow", "actions": ["*"], "resources": ["proj/*", "flag/*"]}],
            "/statements/0/resources/1",
            "no known resource type",
        ),
        (
            [{"effect": "allow", "actions": ["*"], "resources": ["proj/*"], "condition": 1}],
            "/statements/0/condition",
            "unknown statement field",
        ),
    ],
)
def test_a_malformed_statement_is_refused_at_its_pointer(
    statements: Any, path: str, problem: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_statements(statements)
    assert caught.value.path == path
    assert problem in caught.value.message


def test_the_known_actions_are_the_callers_to_choose() -> None:
    body = [{"effect": "allow", "actions": ["executeScheduledChange"], "resources": ["proj/*"]}]
    with pytest.raises(ValidationError):
        parse_statements(body)
    (statement,) = parse_statements(body, actions={"executeScheduledChange"})
    assert statement.actions == ("executeScheduledChange",)


def test_nothing_is_allowed_without_an_allowing_statement() -> None:
    assert not allows((), "updateOn", flag())
    only_segments = policy(
        {"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:segment/*"]}
    )
    assert not allows(only_segments, "updateOn", flag())


def test_a_deny_wins_over_any_allow_whatever_the_order() -> None:
    allow_all = {"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]}
    deny_production = {
        "effect": "deny",
        "actions": ["*"],
        "resources": ["proj/*:env/production:flag/*"],
    }
    for statements in (policy(allow_all, deny_production), policy(deny_production, allow_all)):
        assert not allows(statements, "updateOn", flag(env="production"))
        assert allows(statements, "updateOn", flag(env="test"))


def test_negated_lists_apply_to_everything_else() -> None:
    statements = policy(
        {"effect": "allow", "notActions": ["deleteFlag"], "resources": ["proj/*:env/*:flag/*"]},
    )
    assert allows(statements, "updateOn", flag())
    assert not allows(statements, "deleteFlag", flag())
    not_production = policy(
        {"effect": "allow", "actions": ["*"], "notResources": ["proj/*:env/production:flag/*"]}
    )
    assert allows(not_production, "updateOn", flag(env="test"))
    assert not allows(not_production, "updateOn", flag(env="production"))
    # notResources also covers resources of other types
    assert allows(not_production, "updateName", parse_resource("proj/shop"))


def test_action_globs_match_by_prefix_and_suffix() -> None:
    statements = policy(
        {"effect": "allow", "actions": ["update*"], "resources": ["proj/*:env/*:flag/*"]}
    )
    assert allows(statements, "updateRules", flag())
    assert not allows(statements, "createFlag", flag())


def test_a_filter_passes_a_change_when_one_of_its_accesses_is_allowed() -> None:
    statements = policy(
        {"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/production:flag/*"]}
    )
    both = [("updateOn", flag(env="production")), ("updateOn", flag(env="test"))]
    assert allows_any(statements, both)
    assert not allows_any(statements, [("updateOn", flag(env="test"))])
    assert not allows_any(statements, [])


def test_across_policies_the_most_permissive_wins() -> None:
    denies = policy({"effect": "deny", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]})
    allows_flags = policy(
        {"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/*"]}
    )
    assert permitted([denies, allows_flags], "updateOn", flag())
    assert not permitted([denies], "updateOn", flag())
    assert not permitted([], "updateOn", flag())
