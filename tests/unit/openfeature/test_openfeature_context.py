"""The OpenFeature evaluation context -> Flagstaff context mapping, directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from flagstaff_sdk.openfeature import ContextMappingError, to_context
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode


def test_a_single_context_takes_key_kind_and_built_ins() -> None:
    context = to_context(
        EvaluationContext(
            "u1",
            {
                "name": "Ann",
                "anonymous": True,
                "privateAttributes": ["email", "/address/street"],
                "email": "a@x",
                "address": {"street": "1 Main", "tags": ("a", "b")},
                "ignored": None,
            },
        )
    )
    assert (context.kind, context.key, context.name, context.anonymous) == (
        "user",
        "u1",
        "Ann",
        True,
    )
    assert context.private_attributes == ("email", "/address/street")
    assert dict(context.attributes) == {
        "email": "a@x",
        "address": {"street": "1 Main", "tags": ["a", "b"]},
    }


def test_the_key_attribute_stands_in_for_a_missing_targeting_key() -> None:
    context = to_context(EvaluationContext(None, {"kind": "device", "key": "d1"}))
    assert context.fully_qualified_key == "device:d1"


def test_dates_become_iso_8601_text_in_utc_when_naive() -> None:
    aware = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    naive = datetime(2026, 1, 2, 3, 4, 5)
    context = to_context(EvaluationContext("u", {"seen": aware, "created": naive}))
    assert context.attributes["seen"] == "2026-01-02T03:04:05+02:00"
    assert context.attributes["created"] == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).isoformat()


def test_multi_kind_contexts_use_one_object_per_kind() -> None:
    context = to_context(
        EvaluationContext(
            None,
            {
                "kind": "multi",
                "user": {"targetingKey": "u1", "name": "Ann"},
                "org": {"key": "o1", "anonymous": True},
            },
        )
    )
    assert context.kinds == ("org", "user")
    org = context.individual("org")
    assert org is not None
    assert org.anonymous


def test_a_single_member_multi_context_is_that_context() -> None:
    context = to_context(EvaluationContext(None, {"kind": "multi", "org": {"key": "o1"}}))
    assert (context.kind, context.key) == ("org", "o1")


@pytest.mark.parametrize(
    ("evaluation_context", "code"),
    [
        (None, ErrorCode.TARGETING_KEY_MISSING),
        (EvaluationContext("u", {"kind": 3}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext(None, {"key": 3}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("u", {"kind": "multi", "org": {"key": "o"}}), ErrorCode.INVALID_CONTEXT),
        (EvaluationContext("u", {"privateAttributes": [1]}), ErrorCode.INVALID_CONTEXT),
    ],
)
def test_unmappable_contexts_raise_with_an_error_code(
    evaluation_context: EvaluationContext | None, code: ErrorCode
) -> None:
    with pytest.raises(ContextMappingError) as raised:
        to_context(evaluation_context)
    assert raised.value.error_code == code
    assert raised.value.message
