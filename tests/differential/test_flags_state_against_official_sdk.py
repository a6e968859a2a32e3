"""The SDK's `all_flags_state()` object against `ldclient`'s `FeatureFlagsState` for the same data
file and options: `valid`, `get_flag_value`, `get_flag_reason` (every flag and a missing one),
`to_values_map`, `to_json_dict` and `to_json_string` all answer alike."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from flagstaff_sdk import Client, Config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ldclient import Context as SdkContext
from official_sdk import load
from strategies import contexts, data_sets, note_inputs, questionable_contexts


def _text(value: Any) -> str:
    """JSON text with sorted keys, so `1`, `1.0` and `True` stay different values."""
    return json.dumps(value, sort_keys=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=data_sets(),
    context_list=st.lists(st.one_of(contexts(), questionable_contexts()), min_size=1, max_size=4),
    client_side_only=st.booleans(),
    with_reasons=st.booleans(),
    details_only_for_tracked_flags=st.booleans(),
)
def test_the_flags_state_object_answers_like_ldclients(
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
    keys = [*data["flags"], "no-such-flag"]
    with tempfile.TemporaryDirectory(prefix="flagstaff-state-") as directory, load(data) as sdk:
        path = Path(directory) / "data.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        config = Config(sdk_key="sdk-k", data_files=(path,), send_events=False)
        with Client(config) as client:
            for context in context_list:
                expected = sdk.client.all_flags_state(SdkContext.from_dict(context), **options)
                actual = client.all_flags_state(context, **options)
                where = f"context {json.dumps(context)}"
                assert actual.valid == expected.valid, where
                for key in keys:
                    assert _text(actual.get_flag_value(key)) == _text(
                        expected.get_flag_value(key)
                    ), f"{where} value of {key}"
                    assert actual.get_flag_reason(key) == expected.get_flag_reason(key), (
                        f"{where} reason of {key}"
                    )
                assert _text(actual.to_values_map()) == _text(expected.to_values_map()), where
                assert _text(actual.to_json_dict()) == _text(expected.to_json_dict()), where
                assert _text(json.loads(actual.to_json_string())) == _text(
                    json.loads(expected.to_json_string())
                ), where
