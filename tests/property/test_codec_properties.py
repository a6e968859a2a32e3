"""Properties of decoding and encoding LaunchDarkly data: encoding loses nothing and is stable;
bad data is refused with the path of the bad value, and whatever is accepted evaluates.

Whether the official SDK accepts the encoding is checked in tests/differential, next to the oracle.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import (
    DecodeError,
    decode_context,
    decode_data,
    decode_flag,
    decode_segment,
    encode_data,
    encode_flag,
    encode_segment,
    evaluate,
)
from hypothesis import HealthCheck, given, settings
from strategies import contexts, corrupted_data_sets, data_sets, note_inputs, sparse_data_sets

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


def on_one_branch(first: str, second: str) -> bool:
    """Whether one JSON path is the other or lies inside the value it names."""
    shorter, longer = sorted((first, second), key=len)
    return longer == shorter or longer.startswith((shorter + ".", shorter + "["))


@CODEC_SETTINGS
@given(corrupted=corrupted_data_sets(), context=contexts())
def test_a_bad_value_is_reported_at_its_path_and_accepted_data_still_evaluates(
    corrupted: tuple[dict[str, Any], str], context: dict[str, Any]
) -> None:
    data, bad_path = corrupted
    note_inputs(data=data, bad_path=bad_path)
    try:
        flag_data = decode_data(data)
    except DecodeError as error:
        error_path = error.path
    else:
        error_path = None
    if error_path is not None:
        # The error may name the replaced value or something inside it, never another place.
        assert on_one_branch(error_path, bad_path), f"error at {error_path}"
        return
    decoded_context = decode_context(context)
    for flag in flag_data.flags.values():
        evaluate(flag, decoded_context, flag_data)
