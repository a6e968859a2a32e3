"""Properties of evaluation over any decodable data: it never raises and its results are coherent.

Generated data includes prerequisite cycles, missing prerequisites and segments, segment cycles,
out-of-range variations and empty rollouts, so every error path runs.
"""

from __future__ import annotations

import json
from typing import Any

from flagstaff_core import ReasonKind, decode_context, decode_data, evaluate, evaluate_key
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import MISSING_FLAG_KEY, contexts, data_sets, note_inputs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=data_sets(), context_list=st.lists(contexts(), min_size=1, max_size=5))
def test_evaluate_never_raises_and_value_matches_variation_index(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    note_inputs(data=data, context_list=context_list)
    flag_data = decode_data(data)
    for context_json in context_list:
        context = decode_context(context_json)
        for key, flag_json in data["flags"].items():
            # Tombstones are evaluated too: `flag(key)` hides deleted flags, `flags` keeps them.
            flag = flag_data.flags[key]
            detail = evaluate(flag, context, flag_data).detail
            if detail.variation_index is None:
                assert detail.value is None
            else:
                assert detail.value == flag_json["variations"][detail.variation_index]
            if detail.reason.kind is ReasonKind.ERROR:
                assert detail.variation_index is None


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=data_sets(), context=contexts())
def test_missing_flag_and_missing_context_are_errors_not_exceptions(
    data: dict[str, Any], context: dict[str, Any]
) -> None:
    note_inputs(data=data, context=context)
    flag_data = decode_data(data)
    missing = evaluate_key(flag_data, MISSING_FLAG_KEY, decode_context(context)).detail
    assert missing.reason.to_json() == {"kind": "ERROR", "errorKind": "FLAG_NOT_FOUND"}
    for key in data["flags"]:
        no_context = evaluate_key(flag_data, key, None).detail
        assert no_context.reason.to_json() == {"kind": "ERROR", "errorKind": "USER_NOT_SPECIFIED"}
        assert no_context.variation_index is None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=data_sets(), context_list=st.lists(contexts(), min_size=2, max_size=6))
def test_results_do_not_depend_on_what_was_evaluated_before(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    # Compiled flags and memoised parsing must not carry state from one evaluation to the next.
    note_inputs(data=data, context_list=context_list)

    def evaluate_all(flag_data: Any, order: list[int]) -> dict[tuple[int, str], Any]:
        results = {}
        for index in order:
            context = decode_context(context_list[index])
            for key in data["flags"]:
                detail = evaluate_key(flag_data, key, context).detail
                results[index, key] = json.dumps(
                    [detail.value, detail.variation_index, detail.reason.to_json()]
                )
        return results

    order = list(range(len(context_list)))
    shared = decode_data(data)
    forward = evaluate_all(shared, order)
    backward = evaluate_all(shared, order[::-1])
    fresh = evaluate_all(decode_data(data), order)
    assert forward == backward == fresh
