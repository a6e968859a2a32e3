"""Every case of LaunchDarkly's server-side evaluation vectors, checked three ways.

A plain evaluation (value), a detailed one (value, variation index, reason) and an all-flags
state (value only when a variation was chosen), exactly as the SDK test harness checks SDKs.
"""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_core import (
    ValueType,
    all_flags_state,
    decode_context,
    decode_data,
    evaluate_key,
    typed_detail,
)
from launchdarkly_vectors import Case, load_cases
from support.prerequisites import SHARED_DIR, shared_path

VECTORS = ("conformance", "launchdarkly", "server-side-eval")
_DIRECTORY = SHARED_DIR.joinpath(*VECTORS)
CASES = load_cases(_DIRECTORY) if _DIRECTORY.is_dir() else []
UNTYPED = [c for c in CASES if c.require_capability is None]
STRONGLY_TYPED = [c for c in CASES if c.require_capability == "strongly-typed"]


def test_every_case_is_collected() -> None:
    """A silently skipped file or parameter set fails here."""
    directory = shared_path(*VECTORS)
    assert len(list(directory.glob("*.yml"))) == 27
    assert len(CASES) == 728
    assert len(UNTYPED) == 722
    assert len(STRONGLY_TYPED) == 6
    assert {c.require_capability for c in CASES} == {None, "strongly-typed"}


def _evaluate(case: Case) -> tuple[Any, int | None, dict[str, Any], Any]:
    data = decode_data(case.sdk_data)
    context = decode_context(case.context)
    evaluation = evaluate_key(data, case.flag_key, context)
    detail = evaluation.detail
    value = case.default if detail.value is None else detail.value
    return value, detail.variation_index, detail.reason.to_json(), (data, context)


@pytest.mark.parametrize("case", UNTYPED, ids=lambda c: c.id)
def test_plain_evaluation(case: Case) -> None:
    value, _, _, _ = _evaluate(case)
    assert value == case.expect_value
    assert type(value) is type(case.expect_value)


@pytest.mark.parametrize("case", UNTYPED, ids=lambda c: c.id)
def test_detailed_evaluation(case: Case) -> None:
    value, variation, reason, _ = _evaluate(case)
    assert (value, variation, reason) == (
        case.expect_value,
        case.expect_variation,
        case.expect_reason,
    )


@pytest.mark.parametrize("case", [c for c in UNTYPED if not c.skip_all_flags], ids=lambda c: c.id)
def test_all_flags_state(case: Case) -> None:
    state = all_flags_state(decode_data(case.sdk_data), decode_context(case.context))
    assert state["$valid"] is True
    if case.expect_variation is not None:
        assert case.flag_key in state
        assert state[case.flag_key] == case.expect_value
        assert state["$flagsState"][case.flag_key]["variation"] == case.expect_variation
    else:
        assert state.get(case.flag_key) is None


@pytest.mark.parametrize("case", STRONGLY_TYPED, ids=lambda c: c.id)
def test_typed_evaluation(case: Case) -> None:
    data = decode_data(case.sdk_data)
    evaluation = evaluate_key(data, case.flag_key, decode_context(case.context))
    assert case.value_type is not None
    detail = typed_detail(evaluation.detail, ValueType(case.value_type), case.default)
    assert (detail.value, detail.variation_index, detail.reason.to_json()) == (
        case.expect_value,
        case.expect_variation,
        case.expect_reason,
    )
