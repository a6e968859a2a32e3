"""Clause operators and matching edge cases (protocol §3.5, §3.6, §10.8).

Each row states LaunchDarkly's documented answer and is also checked against the official SDK's
evaluator, so a row cannot drift from the reference.
"""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import decode_context, decode_data, evaluate_key
from official_evaluator import official_evaluate

MISSING = object()


def _match(
    op: str, value: Any, clause_values: list[Any], *, negate: bool = False, nested: bool = False
) -> bool:
    """Whether a one-clause rule matches a user with `attr` (or `/o/attr`) set to `value`."""
    clause: dict[str, Any] = {"attribute": "attr", "op": op, "values": clause_values}
    clause["negate"] = negate
    if nested:
        clause.update(contextKind="user", attribute="/o/attr")
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
                        "clauses": [clause],
                    }
                ],
            }
        }
    }
    context: dict[str, Any] = {"kind": "user", "key": "k"}
    if value is not MISSING:
        if nested:
            context["o"] = {"attr": value}
        else:
            context["attr"] = value
    ours = evaluate_key(decode_data(data), "f", decode_context(context)).detail
    theirs = official_evaluate(data, "f", context)
    assert (ours.value, ours.variation_index, ours.reason.to_json()) == (
        theirs["value"],
        theirs["variationIndex"],
        theirs["reason"],
    )
    return bool(ours.value)


@pytest.mark.parametrize(
    ("op", "context_value", "clause_values", "expected"),
    [
        # in: type-strict JSON equality
        ("in", "a", ["b", "a"], True),
        ("in", 1, [1.0], True),
        ("in", 1.0, [1], True),
        ("in", True, [1], False),
        ("in", 1, [True], False),
        ("in", 0, [False], False),
        ("in", False, [False], True),
        ("in", "1", [1], False),
        ("in", ["x", "a"], ["a"], True),
        ("in", [], ["a"], False),
        ("in", None, [None], False),
        # strings
        ("startsWith", "alphabet", ["alp"], True),
        ("startsWith", "alphabet", ["Alp"], False),
        ("startsWith", 1, ["1"], False),
        ("endsWith", "a@example.com", ["@example.com"], True),
        ("endsWith", "a@example.com", [5], False),
        ("contains", "alphabet", ["hab"], True),
        ("contains", "alphabet", [""], True),
        ("matches", "xxabcxx", ["abc"], True),
        ("matches", "xxabcxx", ["^abc"], False),
        ("matches", "abc", ["("], False),
        ("matches", "abc", ["(", "b"], True),
        ("matches", 12, ["1"], False),
        # numbers
        ("lessThan", 1, [2], True),
        ("lessThan", 2, [2], False),
        ("lessThan", 1.5, [1, 2], True),
        ("lessThanOrEqual", 2, [2.0], True),
        ("greaterThan", 3, [2, 5], True),
        ("greaterThan", "3", [2], False),
        ("greaterThan", True, [0], False),
        ("greaterThanOrEqual", 2, [2], True),
        ("greaterThanOrEqual", 2, ["2"], False),
        # dates: ms numbers or full RFC 3339, strict comparison
        ("before", 1000, [2000], True),
        ("before", "1970-01-01T00:00:01Z", [1000], False),
        ("after", "1970-01-01T00:00:01.5Z", [1000], True),
        ("after", "2017-12-06T00:00:00.000-07:00", ["2017-12-06T06:59:59Z"], True),
        ("before", "2017-12-06", ["2018-01-01T00:00:00Z"], False),
        ("before", "1512543600000", [1512543600001], False),
        ("after", True, [0], False),
        ("before", "2017-12-06T00:00:00Z", ["not a date"], False),
        # semver: missing minor/patch are zero, build metadata ignored, strict syntax
        ("semVerEqual", "2", ["2.0.0"], True),
        ("semVerEqual", "2.0", ["2.0.0"], True),
        ("semVerEqual", "2-rc1", ["2.0.0-rc1"], True),
        ("semVerEqual", "2.0.0+build", ["2.0.0"], True),
        ("semVerEqual", "02.0.0", ["2.0.0"], False),
        ("semVerEqual", "v2.0.0", ["2.0.0"], False),
        ("semVerEqual", "2.0.0.0", ["2.0.0"], False),
        ("semVerLessThan", "2.0.0-rc.1", ["2.0.0"], True),
        ("semVerLessThan", "2.0.0-rc.2", ["2.0.0-rc.10"], True),
        ("semVerLessThan", "2.0.0-alpha", ["2.0.0-1"], False),
        ("semVerLessThan", "2.0.0-alpha", ["2.0.0-alpha.1"], True),
        ("semVerGreaterThan", "10.0.0", ["9.9.9"], True),
        ("semVerGreaterThan", 10, ["9.9.9"], False),
        # unknown operators never match
        ("nonsense", "a", ["a"], False),
    ],
)
def test_operator(op: str, context_value: Any, clause_values: list[Any], expected: bool) -> None:
    # A top-level attribute and a nested path take different compiled closures; both must agree.
    assert _match(op, context_value, clause_values) is expected
    assert _match(op, context_value, clause_values, nested=True) is expected
    negated = _match(op, context_value, clause_values, negate=True)
    assert negated is (not expected and context_value is not None)


def test_missing_attribute_is_a_non_match_even_when_negated() -> None:
    assert _match("in", MISSING, ["a"], negate=True) is False
    assert _match("in", None, ["a"], negate=True) is False


def test_negation_applies_after_matching_any_element() -> None:
    assert _match("in", ["a", "b"], ["b"], negate=True) is False
    assert _match("in", ["a", "b"], ["c"], negate=True) is True
    assert _match("nonsense", "a", ["a"], negate=True) is True


@pytest.mark.parametrize(
    ("clause", "context", "expected"),
    [
        ({"attribute": "kind", "op": "in", "values": ["org"]}, {"kind": "org", "key": "o"}, True),
        (
            {"attribute": "kind", "op": "matches", "values": ["^us"]},
            {"kind": "multi", "org": {"key": "o"}, "user": {"key": "u"}},
            True,
        ),
        (
            {"attribute": "kind", "op": "in", "values": ["user"], "negate": True},
            {"kind": "org", "key": "o"},
            True,
        ),
        (
            {"contextKind": "org", "attribute": "/address/city", "op": "in", "values": ["Oslo"]},
            {
                "kind": "multi",
                "user": {"key": "u"},
                "org": {"key": "o", "address": {"city": "Oslo"}},
            },
            True,
        ),
        (
            {
                "contextKind": "org",
                "attribute": "/address/city",
                "op": "in",
                "values": ["Oslo"],
                "negate": True,
            },
            {"kind": "user", "key": "u", "address": {"city": "Bergen"}},
            False,
        ),
        (
            {"attribute": "/a/b", "op": "in", "values": [1]},
            {"kind": "user", "key": "u", "/a/b": 1},
            True,
        ),
        (
            {"contextKind": "user", "attribute": "/a~1b", "op": "in", "values": [1]},
            {"kind": "user", "key": "u", "a/b": 1},
            True,
        ),
        (
            {"contextKind": "user", "attribute": "name", "op": "in", "values": ["N"]},
            {"kind": "user", "key": "u", "name": "N"},
            True,
        ),
        (
            {"attribute": "anonymous", "op": "in", "values": [False]},
            {"kind": "user", "key": "u"},
            True,
        ),
        ({"attribute": "key", "op": "in", "values": ["u"]}, {"kind": "user", "key": "u"}, True),
    ],
)
def test_clause_selects_the_context_kind_and_attribute(
    clause: dict[str, Any], context: dict[str, Any], expected: bool
) -> None:
    data = {
        "flags": {
            "f": {
                "on": True,
                "variations": [False, True],
                "fallthrough": {"variation": 0},
                "rules": [{"id": "r", "variation": 1, "clauses": [clause]}],
            }
        }
    }
    ours = evaluate_key(decode_data(data), "f", decode_context(context)).detail
    assert ours.value is expected
    assert official_evaluate(data, "f", context)["value"] is expected
