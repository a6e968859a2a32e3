"""The pure rules of scheduled changes: which part of a flag an instruction touches, when two
pending changes conflict, and the create and edit bodies' checks (each error names its field)."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.scheduled_change import (
    OtherChange,
    conflicts_with,
    overlaps,
    parse_schedule_body,
    parse_schedule_patch,
    touched_part,
)
from flagstaff_server.errors import InvalidInput

NOW = 1_780_000_000_000


def other(*instructions: dict[str, Any], environment: str = "production") -> OtherChange:
    return OtherChange(
        id="other", environment=environment, execution_ms=NOW, instructions=list(instructions)
    )


@pytest.mark.parametrize(
    ("instruction", "part"),
    [
        ({"kind": "turnFlagOff"}, "env/production/on"),
        ({"kind": "removeRule", "ruleId": "r1"}, "env/production/rules/r1"),
        ({"kind": "addClauses", "ruleId": "r1", "clauses": []}, "env/production/rules/r1"),
        ({"kind": "reorderRules", "ruleIds": []}, "env/production/rules"),
        ({"kind": "addUserTargets", "values": ["a"]}, "env/production/targets"),
        ({"kind": "addPrerequisite", "key": "p"}, "env/production/prerequisites/p"),
        ({"kind": "updateName", "value": "n"}, "flag/name"),
        ({"kind": "addVariation", "value": 3}, "flag/variations"),
        ({"kind": "deleteFlag"}, "*"),
    ],
)
def test_each_instruction_touches_one_part_of_the_flag(
    instruction: dict[str, Any], part: str
) -> None:
    assert touched_part(instruction, "production") == part


def test_parts_overlap_when_equal_nested_or_the_whole_flag() -> None:
    assert overlaps("env/e/rules", "env/e/rules/r1")
    assert overlaps("env/e/rules/r1", "env/e/rules")
    assert overlaps("*", "flag/name")
    assert not overlaps("env/e/rules/r1", "env/e/rules/r2")
    assert not overlaps("env/e/on", "env/e/onVariation")
    assert not overlaps("env/production/on", "env/test/on")


def test_a_conflict_names_the_instruction_and_the_other_change() -> None:
    mine = [{"kind": "updateName", "value": "x"}, {"kind": "turnFlagOn"}]
    [conflict] = conflicts_with(mine, "production", [other({"kind": "turnFlagOff"})])
    assert conflict["instruction"] == {"kind": "turnFlagOn"}
    assert conflict["scheduledChangeId"] == "other"
    assert "turnFlagOff" in conflict["reason"]
    # environment settings of another environment do not conflict; flag settings do
    assert conflicts_with(mine[1:], "test", [other({"kind": "turnFlagOff"})]) == []
    flag_level = conflicts_with(mine[:1], "test", [other({"kind": "updateName", "value": "y"})])
    assert len(flag_level) == 1


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": NOW - 1, "instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": 1.5, "instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": NOW, "instructions": {}}, "/instructions"),
        ({"executionDate": NOW, "instructions": [{"kind": 3}]}, "/instructions/0/kind"),
        (
            {"executionDate": NOW, "instructions": [{"kind": "turnFlagOn"}], "comment": []},
            "/comment",
        ),
    ],
)
def test_a_bad_create_body_names_its_field(body: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        parse_schedule_body(body, now_ms=NOW)
    assert raised.value.path == path


def test_an_edit_names_where_its_new_instructions_are() -> None:
    edit = parse_schedule_patch(
        {
            "instructions": [
                {"kind": "updateScheduledChangesExecutionDate", "value": NOW + 5},
                {"kind": "replaceScheduledChangesInstructions", "value": [{"kind": "turnFlagOn"}]},
            ]
        },
        now_ms=NOW,
    )
    assert (edit.execution_ms, edit.instructions, edit.delete) == (
        NOW + 5,
        [{"kind": "turnFlagOn"}],
        False,
    )
    assert edit.instructions_path == "/instructions/1/value"
    with pytest.raises(InvalidInput) as raised:
        parse_schedule_patch(
            {"instructions": [{"kind": "replaceScheduledChangesInstructions", "value": [1]}]},
            now_ms=NOW,
        )
    assert raised.value.path == "/instructions/0/value/0"
