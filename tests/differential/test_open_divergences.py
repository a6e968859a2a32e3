"""Known disagreements between flagstaff_core and the official Python SDK 9.18.4, one test each.

Each is a strict xfail naming the fix: once the core agrees, the test passes, pytest reports that
as a failure, and the marker goes while the value joins the pools in tests/strategies.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import ContextError, decode_context, decode_data, evaluate_key
from ldclient import Context as SdkContext
from official_sdk import load
from strategies import OPEN_DIVERGENCES

TRAILING_NEWLINE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="core regexes end in `$`, which also matches before a final newline; use \\Z/fullmatch",
)


def one_clause_flag(op: str, clause_value: Any) -> dict[str, Any]:
    clause = {"attribute": "probe", "op": op, "values": [clause_value], "negate": False}
    flag = {
        "key": "probe",
        "version": 1,
        "on": True,
        "variations": [False, True],
        "offVariation": 0,
        "fallthrough": {"variation": 0},
        "rules": [{"id": "probe", "clauses": [clause], "variation": 1}],
        "salt": "",
    }
    return {"flags": {"probe": flag}, "segments": {}}


def assert_core_agrees(data: dict[str, Any], context: dict[str, Any]) -> None:
    with load(data) as sdk:
        expected = sdk.evaluate("probe", context)["variationIndex"]
    actual = evaluate_key(decode_data(data), "probe", decode_context(context))
    assert actual.detail.variation_index == expected


def is_accepted_by_core(context: dict[str, Any]) -> bool:
    try:
        decode_context(context)
    except ContextError:
        return False
    return True


@TRAILING_NEWLINE
def test_semver_with_trailing_newline_is_not_a_version() -> None:
    data = one_clause_flag("semVerEqual", "1.2.3")
    assert_core_agrees(data, {"kind": "user", "key": "u", "probe": OPEN_DIVERGENCES["semver"]})


@TRAILING_NEWLINE
def test_timestamp_with_trailing_newline_is_not_an_instant() -> None:
    data = one_clause_flag("before", OPEN_DIVERGENCES["timestamp"])
    assert_core_agrees(data, {"kind": "user", "key": "u", "probe": 0})


@TRAILING_NEWLINE
def test_context_kind_with_trailing_newline_is_invalid() -> None:
    context = {"kind": OPEN_DIVERGENCES["kind"], "key": "u"}
    assert is_accepted_by_core(context) == SdkContext.from_dict(context).valid


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="core reads `anonymous: null` as false; the SDK rejects it",
)
def test_null_anonymous_makes_a_context_invalid() -> None:
    context = {"kind": "user", "key": "u", "anonymous": OPEN_DIVERGENCES["anonymous"]}
    assert is_accepted_by_core(context) == SdkContext.from_dict(context).valid
