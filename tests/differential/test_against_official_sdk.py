"""Differential test: flagstaff_core and the official LaunchDarkly Python SDK 9.18.4 on random data.

Every flag of a generated data set is evaluated for every generated context by both; value,
variation index and reason JSON must agree. Cases where the reference SDKs (Go and Python)
themselves disagree are kept out of the generated data by construction; `tests/strategies.py` says
where and why. Known open disagreements of the core are pinned in test_open_divergences.py.

Not excluded, because it practically never happens: a bucket within ~1e-7 of a weight boundary
(Go computes in float32, Python and Flagstaff in float64; a SHA-1 bucket lands there about once
in 10^7 draws).
"""

from __future__ import annotations

import json
from typing import Any

from flagstaff_core import (
    ContextError,
    all_flags_state,
    decode_context,
    decode_data,
    encode_data,
    evaluate_key,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ldclient import Context as SdkContext
from official_sdk import load
from strategies import (
    contexts,
    data_sets,
    note_inputs,
    questionable_contexts,
    sparse_data_sets,
)

EXAMPLES = 400


def evaluate_with_core(data: Any, flag_key: str, context: dict[str, Any]) -> dict[str, Any]:
    detail = evaluate_key(data, flag_key, decode_context(context)).detail
    return {
        "value": detail.value,
        "variationIndex": detail.variation_index,
        "reason": detail.reason.to_json(),
    }


def comparable(result: dict[str, Any]) -> str:
    """JSON text with sorted keys, so `1`, `1.0` and `True` stay different values."""
    return json.dumps(result, sort_keys=True)


def check_agreement(data: dict[str, Any], context_list: list[dict[str, Any]]) -> None:
    """Every flag of `data` for every context: the core's answer equals the SDK's."""
    core_data = decode_data(data)
    with load(data) as sdk:
        for flag_key in data["flags"]:
            for context in context_list:
                expected = sdk.evaluate(flag_key, context)
                actual = evaluate_with_core(core_data, flag_key, context)
                assert comparable(actual) == comparable(expected), (
                    f"flag {flag_key} context {json.dumps(context)}"
                )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=data_sets(), context_list=st.lists(contexts(), min_size=1, max_size=8))
def test_core_agrees_with_official_sdk_on_every_flag_and_context(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    note_inputs(data=data, context_list=context_list)
    check_agreement(data, context_list)


@settings(
    max_examples=EXAMPLES // 4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=sparse_data_sets(), context_list=st.lists(contexts(), min_size=1, max_size=8))
def test_core_agrees_with_official_sdk_when_optional_fields_are_left_out(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    note_inputs(data=data, context_list=context_list)
    check_agreement(data, context_list)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=sparse_data_sets(), context_list=st.lists(contexts(), min_size=1, max_size=4))
def test_official_sdk_loads_what_core_encodes_and_evaluates_it_like_the_original(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    note_inputs(data=data, context_list=context_list)
    encoded = encode_data(decode_data(data))
    # `load` fails when the SDK rejects a file, so the encoding is complete enough for it.
    with load(data) as original, load(encoded) as reencoded:
        for flag_key in data["flags"]:
            for context in context_list:
                assert comparable(reencoded.evaluate(flag_key, context)) == comparable(
                    original.evaluate(flag_key, context)
                ), f"flag {flag_key} context {json.dumps(context)} encoded {json.dumps(encoded)}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=data_sets(),
    context_list=st.lists(contexts(), min_size=1, max_size=4),
    client_side_only=st.booleans(),
    with_reasons=st.booleans(),
    details_only_for_tracked_flags=st.booleans(),
)
def test_all_flags_state_agrees_with_official_sdk(
    data: dict[str, Any],
    context_list: list[dict[str, Any]],
    client_side_only: bool,
    with_reasons: bool,
    details_only_for_tracked_flags: bool,
) -> None:
    options = {
        "client_side_only": client_side_only,
        "with_reasons": with_reasons,
        "details_only_for_tracked_flags": details_only_for_tracked_flags,
    }
    note_inputs(data=data, context_list=context_list, options=options)
    core_data = decode_data(data)
    with load(data) as sdk:
        for context in context_list:
            expected = sdk.client.all_flags_state(SdkContext.from_dict(context), **options)
            actual = all_flags_state(core_data, decode_context(context), **options)
            assert comparable(actual) == comparable(expected.to_json_dict()), (
                f"context {json.dumps(context)}"
            )


@settings(max_examples=300, deadline=None)
@given(context=questionable_contexts())
def test_context_validity_agrees_with_official_sdk(context: dict[str, Any]) -> None:
    # An invalid context makes every evaluation USER_NOT_SPECIFIED: validity is part of the answer.
    note_inputs(context=context)
    try:
        decode_context(context)
        accepted = True
    except ContextError:
        accepted = False
    assert accepted == SdkContext.from_dict(context).valid, f"core accepts: {accepted}"
