"""Bucketing reproduces the official SDK's SHA-1 buckets (the harness's hashKey/saltyA vectors)."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import decode_context, decode_data, evaluate_key
from flagstaff_core.bucketing import bucket, bucket_prefix
from ldclient import Context as SdkContext
from ldclient.impl.evaluator_common import _bucket_context
from ldclient.impl.model.attribute_ref import AttributeRef
from official_evaluator import official_evaluate


@pytest.mark.parametrize("value", ["userKeyA", "userKeyB", "userKeyC", "", "ünï", "a.b"])
@pytest.mark.parametrize("seed", [None, 61, 0, -5])
def test_bucket_matches_the_official_sdk(value: str, seed: int | None) -> None:
    expected = _bucket_context(
        seed, SdkContext.create(value or "x"), None, "hashKey", "saltyA", None
    )
    if value == "":
        expected = _bucket_context(
            seed, SdkContext.builder("x").set("v", "").build(), None, "hashKey", "saltyA",
            AttributeRef.from_literal("v"),
        )  # fmt: skip
    assert bucket(bucket_prefix("hashKey", "saltyA", seed), value) == expected


@pytest.mark.parametrize("value", [0, 33, -1, 10**20, 1.0, 1.5, True, None, ["a"], {"a": 1}])
def test_only_strings_and_integers_are_bucketable(value: Any) -> None:
    context = SdkContext.builder("k").set("v", value).build()
    expected = _bucket_context(None, context, None, "f", "s", AttributeRef.from_literal("v"))
    assert bucket(bucket_prefix("f", "s", None), value) == expected
    assert 0.0 <= bucket("f.s.", value) < 1.0


def _rollout_flag(rollout: dict[str, Any]) -> dict[str, Any]:
    return {
        "flags": {
            "f": {
                "on": True,
                "salt": "saltyA",
                "variations": ["a", "b", "c"],
                "fallthrough": {"rollout": rollout},
            }
        }
    }


@pytest.mark.parametrize(
    "rollout",
    [
        {"variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]},
        {"variations": [{"variation": 0, "weight": 0}, {"variation": 1, "weight": 100000}]},
        {"variations": [{"variation": 2, "weight": 10}, {"variation": 1, "weight": 10}]},
        {
            "kind": "experiment",
            "seed": 61,
            "variations": [{"variation": 0, "weight": 30000}, {"variation": 1, "weight": 70000}],
        },
        {
            "kind": "experiment",
            "bucketBy": "email",
            "variations": [
                {"variation": 0, "weight": 50000},
                {"variation": 1, "weight": 50000, "untracked": True},
            ],
        },
        {
            "bucketBy": "email",
            "variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}],
        },
        {
            "contextKind": "org",
            "variations": [{"variation": 0, "weight": 0}, {"variation": 1, "weight": 100000}],
        },
        {
            "contextKind": "org",
            "bucketBy": "/a/b",
            "variations": [{"variation": 0, "weight": 40000}, {"variation": 1, "weight": 60000}],
        },
        {
            "contextKind": "org",
            "bucketBy": "/a~",
            "variations": [{"variation": 0, "weight": 40000}],
        },
    ],
)
@pytest.mark.parametrize(
    "context",
    [
        {"kind": "user", "key": "userKeyA", "email": "a@x"},
        {"kind": "user", "key": "userKeyB"},
        {"kind": "org", "key": "userKeyC", "a": {"b": "deep"}},
        {"kind": "multi", "user": {"key": "userKeyA"}, "org": {"key": "o", "a": {"b": 7}}},
    ],
)
def test_rollouts_and_experiments_choose_as_the_official_sdk(
    rollout: dict[str, Any], context: dict[str, Any]
) -> None:
    data = _rollout_flag(rollout)
    detail = evaluate_key(decode_data(data), "f", decode_context(context)).detail
    theirs = official_evaluate(data, "f", context)
    assert (detail.value, detail.variation_index, detail.reason.to_json()) == (
        theirs["value"],
        theirs["variationIndex"],
        theirs["reason"],
    )


def test_weighted_segment_rule_buckets_by_segment_key_and_salt() -> None:
    included = 0
    for index in range(200):
        key = f"user-{index}"
        data = {
            "flags": {
                "f": {
                    "on": True,
                    "variations": [False, True],
                    "fallthrough": {"variation": 0},
                    "rules": [
                        {
                            "id": "r",
                            "variation": 1,
                            "clauses": [{"attribute": "", "op": "segmentMatch", "values": ["s"]}],
                        }
                    ],
                }
            },
            "segments": {"s": {"salt": "pepper", "rules": [{"clauses": [], "weight": 30000}]}},
        }
        context = {"kind": "user", "key": key}
        ours = evaluate_key(decode_data(data), "f", decode_context(context)).detail.value
        assert ours == official_evaluate(data, "f", context)["value"]
        included += ours
    assert 30 < included < 90
