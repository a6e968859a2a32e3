"""Properties of decoding and encoding LaunchDarkly data: encoding loses nothing and is stable.

Whether the official SDK accepts the encoding is checked in tests/differential, next to the oracle.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import (
    decode_data,
    decode_flag,
    decode_segment,
    encode_data,
    encode_flag,
    encode_segment,
)
from hypothesis import HealthCheck, given, settings
from strategies import data_sets, note_inputs, sparse_data_sets

CODEC_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@CODEC_SETTINGS
@given(data=data_sets())
def test_decoding_the_encoding_gives_back_the_same_data(data: dict[str, Any]) -> None:
    note_inputs(data=data)
    decoded = decode_data(data)
    assert decode_data(encode_data(decoded)) == decoded


@CODEC_SETTINGS
@given(data=sparse_data_sets())
def test_encoding_is_stable_after_one_round_trip(data: dict[str, Any]) -> None:
    note_inputs(data=data)
    encoded = encode_data(decode_data(data))
    assert encode_data(decode_data(encoded)) == encoded


@CODEC_SETTINGS
@given(data=data_sets())
def test_each_flag_and_segment_round_trips_alone(data: dict[str, Any]) -> None:
    note_inputs(data=data)
    for flag_json in data["flags"].values():
        flag = decode_flag(flag_json)
        assert decode_flag(encode_flag(flag)) == flag
    for segment_json in data["segments"].values():
        segment = decode_segment(segment_json)
        assert decode_segment(encode_segment(segment)) == segment
