"""OFREP mapping: the request context becomes a LaunchDarkly context (targetingKey -> key, kind
attribute -> kind), LaunchDarkly reasons become OpenFeature reasons as docs/client-delivery.md
tables them, and errors become OFREP error codes."""

from __future__ import annotations

from typing import Any

import pytest
from delivery_support import flag, segment
from flagstaff_core import Context, decode_context, decode_data, evaluate, evaluate_key
from flagstaff_server.delivery import ofrep
from flagstaff_server.delivery.client_context import ClientContext

RULE = {"id": "rule-1", "clauses": [{"attribute": "plan", "op": "in", "values": ["pro"]}]}
HALF = {"variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]}


def test_targeting_key_and_kind_become_key_and_kind() -> None:
    mapped = ofrep.context_of({"context": {"targetingKey": "acme", "kind": "org", "tier": 3}})
    assert isinstance(mapped, ClientContext)
    assert (mapped.context.kind, mapped.context.key) == ("org", "acme")
    assert mapped.context.get("tier") == 3


def test_kind_defaults_to_user_and_attributes_cannot_override_the_key() -> None:
    mapped = ofrep.context_of({"context": {"targetingKey": "u-1", "key": "other", "plan": "pro"}})
    assert isinstance(mapped, ClientContext)
    assert (mapped.context.kind, mapped.context.key) == ("user", "u-1")


@pytest.mark.parametrize(
    ("request_body", "code"),
    [
        ([], "PARSE_ERROR"),
        ({}, "TARGETING_KEY_MISSING"),
        ({"context": {}}, "TARGETING_KEY_MISSING"),
        ({"context": {"targetingKey": ""}}, "TARGETING_KEY_MISSING"),
        ({"context": "u"}, "INVALID_CONTEXT"),
        ({"context": {"targetingKey": 1}}, "INVALID_CONTEXT"),
        ({"context": {"targetingKey": "u", "kind": "multi"}}, "INVALID_CONTEXT"),
        ({"context": {"targetingKey": "u", "kind": 7}}, "INVALID_CONTEXT"),
        ({"context": {"targetingKey": "u", "kind": "bad kind!"}}, "INVALID_CONTEXT"),
        ({"context": {"targetingKey": "u", "anonymous": "yes"}}, "INVALID_CONTEXT"),
    ],
)
def test_bad_contexts_map_to_ofrep_error_codes(request_body: Any, code: str) -> None:
    failure = ofrep.context_of(request_body)
    assert isinstance(failure, ofrep.Failure)
    assert (failure.status, failure.code) == (400, code)
    assert failure.body("f") == {"key": "f", "errorCode": code, "errorDetails": failure.details}


def result(made: dict[str, Any], context: Context, **segments: dict[str, Any]) -> dict[str, Any]:
    data = decode_data({"flags": {made["key"]: made}, "segments": segments})
    compiled = data.flag(made["key"])
    assert compiled is not None
    return ofrep.result_of(made["key"], compiled, evaluate(compiled, context, data))


def context(plan: str = "free") -> Context:
    return decode_context({"kind": "user", "key": "u-1", "plan": plan})


@pytest.mark.parametrize(
    ("made", "plan", "reason", "ld_reason"),
    [
        (flag("f", on=False), "free", "DISABLED", "OFF"),
        (flag("f"), "free", "STATIC", "FALLTHROUGH"),
        ({**flag("f"), "fallthrough": {"rollout": HALF}}, "free", "SPLIT", "FALLTHROUGH"),
        (
            {**flag("f"), "targets": [{"values": ["u-1"], "variation": 0}]},
            "free",
            "TARGETING_MATCH",
            "TARGET_MATCH",
        ),
        (flag("f", rules=[{**RULE, "variation": 0}]), "pro", "TARGETING_MATCH", "RULE_MATCH"),
        (flag("f", rules=[{**RULE, "rollout": HALF}]), "pro", "SPLIT", "RULE_MATCH"),
        (
            {**flag("f"), "prerequisites": [{"key": "missing", "variation": 0}]},
            "free",
            "DISABLED",
            "PREREQUISITE_FAILED",
        ),
    ],
)
def test_launchdarkly_reasons_map_to_openfeature_reasons(
    made: dict[str, Any], plan: str, reason: str, ld_reason: str
) -> None:
    body = result(made, context(plan))
    assert (body["reason"], body["metadata"]["ldReason"]) == (reason, ld_reason)
    assert body["variant"] == str(body["metadata"]["variationIndex"])
    assert body["value"] == made["variations"][body["metadata"]["variationIndex"]]
    assert body["metadata"]["flagVersion"] == made["version"]


def test_rule_id_and_prerequisite_key_are_metadata() -> None:
    matched = result(flag("f", rules=[{**RULE, "variation": 0}]), context("pro"))
    assert matched["metadata"]["ruleId"] == "rule-1"
    failed = result({**flag("f"), "prerequisites": [{"key": "gone", "variation": 0}]}, context())
    assert failed["metadata"]["prerequisiteKey"] == "gone"


def test_no_variation_means_no_value_and_no_variant() -> None:
    body = result({**flag("f", on=False), "offVariation": None}, context())
    assert "value" not in body
    assert "variant" not in body
    assert body["reason"] == "DISABLED"


def test_malformed_flag_is_a_general_error() -> None:
    body = result(flag("f", fallthrough=9), context())
    assert body["errorCode"] == "GENERAL"
    assert "MALFORMED_FLAG" in body["errorDetails"]


def test_missing_flag_is_flag_not_found_404() -> None:
    data = decode_data({"flags": {}, "segments": {"s": segment("s")}})
    failure = ofrep.failure_of(evaluate_key(data, "nope", context()))
    assert failure is not None
    assert (failure.status, failure.code) == (404, "FLAG_NOT_FOUND")
