"""Differential test: flagstaff_core and the official LaunchDarkly Python SDK 9.18.4 on random data.

Every flag of a generated data set is evaluated for every generated context by both; value,
variation index and reason JSON must agree. Cases where the reference SDKs (Go and Python)
themselves disagree are kept out of the generated data by construction; `tests/strategies.py` says
where and why.

Not excluded, because it practically never happens: a bucket within ~1e-7 of a weight boundary
(Go computes in float32, Python and Flagstaff in float64; a SHA-1 bucket lands there about once
in 10^7 draws).
"""

from __future__ import annotations

import json
from typing import Any

from flagstaff_core import decode_context, decode_data, encode_data, evaluate_key
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from official_sdk import load
from strategies import contexts, data_sets

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


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=data_sets(), context_list=st.lists(contexts(), min_size=1, max_size=8))
def test_core_agrees_with_official_sdk_on_every_flag_and_context(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    core_data = decode_data(data)
    with load(data) as sdk:
        for flag_key in data["flags"]:
            for context in context_list:
                expected = sdk.evaluate(flag_key, context)
                actual = evaluate_with_core(core_data, flag_key, context)
                assert comparable(actual) == comparable(expected), (
                    f"flag {flag_key} context {json.dumps(context)} data {json.dumps(data)}"
                )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=data_sets(), context_list=st.lists(contexts(), min_size=1, max_size=4))
def test_official_sdk_loads_what_core_encodes_and_evaluates_it_like_the_original(
    data: dict[str, Any], context_list: list[dict[str, Any]]
) -> None:
    encoded = encode_data(decode_data(data))
    # `load` fails when the SDK rejects a file, so the encoding is complete enough for it.
    with load(data) as original, load(encoded) as reencoded:
        for flag_key in data["flags"]:
            for context in context_list:
                assert comparable(reencoded.evaluate(flag_key, context)) == comparable(
                    original.evaluate(flag_key, context)
                ), f"flag {flag_key} context {json.dumps(context)} encoded {json.dumps(encoded)}"
