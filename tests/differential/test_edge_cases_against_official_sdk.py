"""Edge cases where the core once disagreed with the official Python SDK 9.18.4, one test each.

A `$` anchor also matches before a trailing newline, so such strings passed as versions, instants
and kinds; and `"anonymous": null` was read as false. The values are in tests/strategies.py's pools
too; these tests keep each case pinned explicitly.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import ContextError, decode_context, decode_data, evaluate_key
from ldclient import Context as SdkContext
from official_sdk import load


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


def test_semver_with_trailing_newline_is_not_a_version() -> None:
    data = one_clause_flag("semVerEqual", "1.2.3")
    assert_core_agrees(data, {"kind": "user", "key": "u", "probe": "1.2.3\n"})


def test_timestamp_with_trailing_newline_is_not_an_instant() -> None:
    data = one_clause_flag("before", "2024-01-01T00:00:00Z\n")
    assert_core_agrees(data, {"kind": "user", "key": "u", "probe": 0})


def test_context_kind_with_trailing_newline_is_invalid() -> None:
    context = {"kind": "user\n", "key": "u"}
    assert is_accepted_by_core(context) == SdkContext.from_dict(context).valid


def test_null_anonymous_makes_a_context_invalid() -> None:
    context = {"kind": "user", "key": "u", "anonymous": None}
    assert is_accepted_by_core(context) == SdkContext.from_dict(context).valid
