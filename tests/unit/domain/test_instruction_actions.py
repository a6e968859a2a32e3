"""Every semantic patch instruction Flagstaff applies names the LaunchDarkly action it needs
(`domain.instruction_actions`), an action LaunchDarkly documents for that resource type; a patch
needs each of its instructions' actions, environment-wide ones in its environment and flag-wide
ones in every environment (`env/*`)."""

from __future__ import annotations

from flagstaff_server.domain.flag_instruction import FLAG_INSTRUCTIONS
from flagstaff_server.domain.instruction_actions import (
    FLAG_INSTRUCTION_ACTIONS,
    SEGMENT_INSTRUCTION_ACTIONS,
    flag_patch_accesses,
    segment_patch_accesses,
)
from flagstaff_server.domain.policy import Resource, parse_statements
from flagstaff_server.domain.policy_catalog import FLAG_ACTIONS, SEGMENT_ACTIONS
from flagstaff_server.domain.role_policy import Caller, Grant, RolePolicy, decide
from flagstaff_server.domain.segment_instruction import SEGMENT_INSTRUCTIONS


def test_every_flag_instruction_names_a_documented_flag_action() -> None:
    assert set(FLAG_INSTRUCTION_ACTIONS) == set(FLAG_INSTRUCTIONS)
    assert {needed.action for needed in FLAG_INSTRUCTION_ACTIONS.values()} <= FLAG_ACTIONS


def test_every_segment_instruction_names_a_documented_segment_action() -> None:
    assert set(SEGMENT_INSTRUCTION_ACTIONS) == set(SEGMENT_INSTRUCTIONS)
    assert set(SEGMENT_INSTRUCTION_ACTIONS.values()) <= SEGMENT_ACTIONS


def test_a_flag_patch_needs_every_action_its_instructions_imply() -> None:
    instructions = [
        {"kind": "turnFlagOn"},
        {"kind": "addRule", "clauses": []},
        {"kind": "turnFlagOff"},
        {"kind": "updateName", "value": "New"},
    ]

    found = flag_patch_accesses(instructions, project="shop", environment="production", key="k")

    assert [(action, str(resource)) for action, resource in found] == [
        ("updateOn", "proj/shop:env/production:flag/k"),
        ("updateRules", "proj/shop:env/production:flag/k"),
        ("updateName", "proj/shop:env/*:flag/k"),
    ]


def test_a_toggler_may_toggle_but_not_toggle_and_add_a_rule() -> None:
    toggler = RolePolicy(
        key="toggler",
        statements=parse_statements(
            [{"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/*:flag/*"]}]
        ),
    )
    caller = Caller(grants=(Grant(custom_roles=(toggler,)),))

    def needs(*kinds: str) -> list[tuple[str, Resource]]:
        return list(
            flag_patch_accesses(
                [{"kind": kind} for kind in kinds], project="p", environment="test", key="k"
            )
        )

    assert decide(caller, needs("turnFlagOn", "turnFlagOff")).allowed
    refused = decide(caller, needs("turnFlagOn", "addRule"))
    assert (refused.allowed, refused.action, refused.resource) == (
        False,
        "updateRules",
        "proj/p:env/test:flag/k",
    )
    assert needs("unknownKind") == []


def test_a_segment_patch_names_its_environment() -> None:
    found = segment_patch_accesses(
        [{"kind": "addIncludedTargets"}, {"kind": "addTags"}, {"kind": "removeIncludedUsers"}],
        project="shop",
        environment="test",
        key="beta",
    )
    assert [(a, str(r)) for a, r in found] == [
        ("updateIncluded", "proj/shop:env/test:segment/beta"),
        ("updateTags", "proj/shop:env/test:segment/beta"),
    ]
