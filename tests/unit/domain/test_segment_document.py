"""Segment documents: creation, validation, JSON Patch, and every segment semantic instruction."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from flagstaff_server.domain import (
    SEGMENT_INSTRUCTIONS,
    IdFactory,
    apply_segment_json_patch,
    apply_segment_merge_patch,
    apply_segment_semantic_patch,
    new_segment_document,
    present_segment,
    validate_segment_document,
)
from flagstaff_server.errors import ValidationError, VersionConflict

NOW = 1_700_000_000_000
Segment = dict[str, Any]


@pytest.fixture
def segment(new_id: IdFactory) -> Segment:
    document = new_segment_document(
        {"key": "beta", "name": "Beta testers", "tags": ["t"]}, now_ms=NOW, new_id=new_id
    )
    document["included"] = ["u1"]
    document["excluded"] = ["u2"]
    document["includedContexts"] = [{"contextKind": "org", "values": ["o1"]}]
    document["rules"] = [
        {
            "_id": "r1",
            "clauses": [
                {
                    "_id": "c1",
                    "contextKind": "user",
                    "attribute": "email",
                    "op": "endsWith",
                    "values": ["@x.io"],
                    "negate": False,
                }
            ],
        }
    ]
    return document


def run(segment: Segment, *instructions: dict[str, Any]) -> Segment:
    counter = itertools.count(1)
    result = apply_segment_semantic_patch(
        segment, list(instructions), now_ms=NOW, new_id=lambda: f"new-{next(counter)}"
    )
    validate_segment_document(result.document)
    return result.document


def fails(segment: Segment, *instructions: dict[str, Any]) -> str:
    before = copy.deepcopy(segment)
    with pytest.raises(ValidationError) as raised:
        apply_segment_semantic_patch(segment, list(instructions), now_ms=NOW, new_id=lambda: "x")
    assert segment == before
    return str(raised.value.path)


def test_new_segment(segment: Segment, new_id: IdFactory) -> None:
    fresh = new_segment_document({"key": "s", "name": "S"}, now_ms=NOW, new_id=new_id)
    assert fresh["version"] == 1
    assert fresh["creationDate"] == NOW
    assert fresh["salt"]
    assert fresh["unbounded"] is False
    validate_segment_document(fresh)
    validate_segment_document(segment)
    for body, path in (
        ({"name": "S"}, "/key"),
        ({"key": "s s", "name": "S"}, "/key"),
        ({"key": "s"}, "/name"),
        ({"key": "s", "name": "S", "unboundedContextKind": "multi"}, "/unboundedContextKind"),
    ):
        with pytest.raises(ValidationError) as raised:
            new_segment_document(body, now_ms=NOW, new_id=new_id)
        assert raised.value.path == path


@pytest.mark.parametrize(
    ("name", "value", "path"),
    [
        ("included", "u1", "/included"),
        ("excluded", ["u1"], "/excluded"),
        ("includedContexts", [{"values": ["a"]}], "/includedContexts/0/contextKind"),
        (
            "excludedContexts",
            [{"contextKind": "org", "values": ["o1"]}],
            "/excludedContexts/0/values",
        ),
        (
            "rules",
            [{"clauses": [{"attribute": "a", "op": "nope", "values": []}]}],
            "/rules/0/clauses/0/op",
        ),
        ("rules", [{"clauses": [], "weight": 100001}], "/rules/0/weight"),
        ("rules", [{"clauses": [], "bucketBy": "//"}], "/rules/0/bucketBy"),
        ("rules", [{"clauses": [], "rolloutContextKind": "kind"}], "/rules/0/rolloutContextKind"),
        ("rules", [{"_id": "a", "clauses": []}, {"_id": "a", "clauses": []}], "/rules/1/_id"),
        ("rules", [{}], "/rules/0/clauses"),
        ("version", "1", "/version"),
        ("unbounded", 1, "/unbounded"),
    ],
)
def test_segment_validation_reports_path(
    segment: Segment, name: str, value: Any, path: str
) -> None:
    segment[name] = value
    with pytest.raises(ValidationError) as raised:
        validate_segment_document(segment)
    assert raised.value.path == path


def test_json_patch_on_segment(segment: Segment, new_id: IdFactory) -> None:
    patched = apply_segment_json_patch(
        segment,
        [
            {"op": "test", "path": "/version", "value": 1},
            {"op": "add", "path": "/included/-", "value": "u3"},
            {
                "op": "add",
                "path": "/rules/-",
                "value": {"clauses": [{"attribute": "a", "op": "in", "values": [1]}]},
            },
        ],
        new_id=new_id,
    )
    assert patched["included"] == ["u1", "u3"]
    assert patched["rules"][1]["_id"]
    assert patched["rules"][1]["clauses"][0]["negate"] is False
    validate_segment_document(patched)
    with pytest.raises(VersionConflict):
        apply_segment_json_patch(
            segment, [{"op": "test", "path": "/version", "value": 9}], new_id=new_id
        )
    for path in ("/key", "/version", "/salt", "/_links", ""):
        with pytest.raises(ValidationError):
            apply_segment_json_patch(
                segment, [{"op": "replace", "path": path, "value": 1}], new_id=new_id
            )
    merged = apply_segment_merge_patch(segment, {"description": "d"}, new_id=new_id)
    assert merged["description"] == "d"
    with pytest.raises(ValidationError):
        apply_segment_merge_patch(segment, {"version": 3}, new_id=new_id)


def test_present_segment(segment: Segment) -> None:
    from launchdarkly_api.models import UserSegment

    shown = present_segment(segment, project_key="default", environment_key="production")
    assert shown["_links"]["self"]["href"] == "/api/v2/segments/default/production/beta"
    assert UserSegment.from_dict(shown) is not None


def test_included_and_excluded_targets(segment: Segment) -> None:
    result = run(
        segment,
        {"kind": "addIncludedTargets", "contextKind": "org", "values": ["o2"]},
        {"kind": "addExcludedTargets", "contextKind": "device", "values": ["d1"]},
        {"kind": "addIncludedUsers", "values": ["u3", "u1"]},
        {"kind": "addExcludedUsers", "values": ["u4"]},
        {"kind": "addIncludedTargets", "contextKind": "user", "values": ["u5"]},
    )
    assert result["included"] == ["u1", "u3", "u5"]
    assert result["excluded"] == ["u2", "u4"]
    assert result["includedContexts"] == [{"contextKind": "org", "values": ["o1", "o2"]}]
    assert result["excludedContexts"] == [{"contextKind": "device", "values": ["d1"]}]
    removed = run(
        result,
        {"kind": "removeIncludedTargets", "contextKind": "org", "values": ["o1", "o2"]},
        {"kind": "removeExcludedTargets", "contextKind": "device", "values": ["d1"]},
        {"kind": "removeIncludedUsers", "values": ["u3"]},
        {"kind": "removeExcludedUsers", "values": ["u2", "u4"]},
    )
    assert removed["included"] == ["u1", "u5"]
    assert removed["excluded"] == []
    assert removed["includedContexts"] == []
    assert removed["excludedContexts"] == []


def test_a_key_cannot_be_both_included_and_excluded(segment: Segment) -> None:
    assert (
        fails(segment, {"kind": "addExcludedUsers", "values": ["u9", "u1"]})
        == "/instructions/0/values/1"
    )
    assert fails(
        segment, {"kind": "addExcludedTargets", "contextKind": "org", "values": ["o1"]}
    ) == ("/instructions/0/values/0")
    assert (
        fails(segment, {"kind": "addIncludedTargets", "values": ["x"]})
        == "/instructions/0/contextKind"
    )


def test_segment_rules_and_clauses(segment: Segment) -> None:
    result = run(
        segment,
        {
            "kind": "addRule",
            "clauses": [{"attribute": "plan", "op": "in", "values": ["gold"]}],
            "description": "gold",
            "weight": 25000,
            "rolloutContextKind": "user",
            "bucketBy": "key",
        },
        {
            "kind": "addClauses",
            "ruleId": "r1",
            "clauses": [{"attribute": "age", "op": "lessThan", "values": [30]}],
        },
        {"kind": "addValuesToClause", "ruleId": "r1", "clauseId": "c1", "values": ["@y.io"]},
        {"kind": "removeValuesFromClause", "ruleId": "r1", "clauseId": "c1", "values": ["@x.io"]},
        {"kind": "updateRuleDescription", "ruleId": "r1", "description": "emails"},
        {"kind": "reorderRules", "ruleIds": ["new-1", "r1"]},
    )
    assert [rule["_id"] for rule in result["rules"]] == ["new-1", "r1"]
    new_rule = result["rules"][0]
    assert (new_rule["weight"], new_rule["description"], new_rule["clauses"][0]["contextKind"]) == (
        25000,
        "gold",
        "user",
    )
    old_rule = result["rules"][1]
    assert old_rule["description"] == "emails"
    assert old_rule["clauses"][0]["values"] == ["@y.io"]
    assert old_rule["clauses"][1]["op"] == "lessThan"
    updated = run(
        result,
        {
            "kind": "updateClause",
            "ruleId": "r1",
            "clauseId": "c1",
            "clause": {"attribute": "name", "op": "contains", "values": ["a"]},
        },
        {"kind": "removeClauses", "ruleId": "r1", "clauseIds": [old_rule["clauses"][1]["_id"]]},
        {
            "kind": "updateRuleRolloutAndContextKind",
            "ruleId": "new-1",
            "weight": 50000,
            "contextKind": "org",
        },
        {"kind": "removeRule", "ruleId": "gone-already"},
    )
    assert updated["rules"][1]["clauses"] == [
        {
            "_id": "c1",
            "contextKind": "user",
            "attribute": "name",
            "op": "contains",
            "values": ["a"],
            "negate": False,
        }
    ]
    assert (updated["rules"][0]["weight"], updated["rules"][0]["rolloutContextKind"]) == (
        50000,
        "org",
    )
    removed = run(updated, {"kind": "removeRule", "ruleId": "r1"})
    assert [rule["_id"] for rule in removed["rules"]] == ["new-1"]
    assert fails(segment, {"kind": "addRule", "weight": 100001}) == "/instructions/0/weight"
    assert fails(segment, {"kind": "reorderRules", "ruleIds": []}) == "/instructions/0/ruleIds"
    assert (
        fails(segment, {"kind": "addClauses", "ruleId": "zz", "clauses": []})
        == "/instructions/0/ruleId"
    )


def test_rollout_update_sets_keeps_and_clears_bucket_by(segment: Segment) -> None:
    def rollout(**params: Any) -> dict[str, Any]:
        return {"kind": "updateRuleRolloutAndContextKind", "ruleId": "r1", **params}

    bucketed = run(segment, rollout(weight=30000, bucketBy="/address/city"))
    assert (bucketed["rules"][0]["weight"], bucketed["rules"][0]["bucketBy"]) == (
        30000,
        "/address/city",
    )
    kept = run(bucketed, rollout(weight=40000))
    assert (kept["rules"][0]["weight"], kept["rules"][0]["bucketBy"]) == (40000, "/address/city")
    cleared = run(kept, rollout(bucketBy=None))
    assert "bucketBy" not in cleared["rules"][0]
    assert "weight" not in cleared["rules"][0]
    assert [clause["_id"] for clause in cleared["rules"][0]["clauses"]] == ["c1"]
    assert fails(segment, rollout(bucketBy="/a//b")) == "/instructions/0/bucketBy"
    assert fails(segment, rollout(bucketBy=7)) == "/instructions/0/bucketBy"
    assert fails(segment, rollout(bucketBy="")) == "/instructions/0/bucketBy"


def test_segment_metadata_instructions(segment: Segment) -> None:
    result = run(
        segment,
        {"kind": "updateName", "value": "Renamed"},
        {"kind": "updateDescription", "value": "words"},
        {"kind": "addTags", "values": ["z", "a"]},
        {"kind": "removeTags", "values": ["t"]},
    )
    assert (result["name"], result["description"], result["tags"]) == (
        "Renamed",
        "words",
        ["a", "z"],
    )
    assert fails(segment, {"kind": "updateName", "value": 3}) == "/instructions/0/value"
    assert fails(segment, {"kind": "turnFlagOn"}) == "/instructions/0/kind"


def test_every_documented_segment_instruction_is_supported() -> None:
    required = [
        "addIncludedTargets",
        "removeIncludedTargets",
        "addExcludedTargets",
        "removeExcludedTargets",
        "addIncludedUsers",
        "removeIncludedUsers",
        "addExcludedUsers",
        "removeExcludedUsers",
        "addRule",
        "removeRule",
        "reorderRules",
        "addClauses",
        "removeClauses",
        "updateClause",
        "addValuesToClause",
        "removeValuesFromClause",
        "updateRuleDescription",
        "updateRuleRolloutAndContextKind",
        "updateName",
        "updateDescription",
        "addTags",
        "removeTags",
    ]
    assert set(required) <= set(SEGMENT_INSTRUCTIONS)
