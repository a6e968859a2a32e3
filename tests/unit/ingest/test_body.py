"""Event bodies: size limit, bounded gzip (a zip bomb is 413, not memory), JSON shape checks,
the nesting limit."""

from __future__ import annotations

import gzip
from typing import Any

import orjson
import pytest
from flagstaff_server.ingest.body import BodyError, check_events, gunzip, read_body
from flagstaff_server.nesting import MAX_DEPTH, MAX_DOCUMENT_DEPTH


def test_a_zip_bomb_hits_the_limit() -> None:
    bomb = gzip.compress(b"\x00" * (64 << 20))
    assert len(bomb) < 100_000
    with pytest.raises(BodyError) as caught:
        gunzip(bomb, 1 << 20)
    assert caught.value.status == 413


def test_gzip_within_the_limit_comes_back_whole() -> None:
    data = b'[{"kind":"custom","key":"k"}]'
    assert gunzip(gzip.compress(data), 1000) == data


@pytest.mark.parametrize("data", [b"not gzip", gzip.compress(b"[1,2,3]")[:-6]])
def test_bad_or_truncated_gzip_is_400(data: bytes) -> None:
    with pytest.raises(BodyError) as caught:
        gunzip(data, 1000)
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("data", "diagnostic", "fragment", "field"),
    [
        (b"[{", False, "not valid JSON", ""),
        (b'[{"kind":"custom","data":{"a":[1,}]}}]', False, "not valid JSON", ""),
        (b'[{"kind":"custom"}] trailing', False, "not valid JSON", ""),
        (b'{"kind":"custom"}', False, "Expected `array`, got `object`", ""),
        (b"[1]", False, "Expected `object`, got `int`", "/0"),
        (b'[{"kind":"custom"},{"key":"x"}]', False, "missing required field `kind`", "/1"),
        (b'[{"kind":"custom"},{"kind":7}]', False, "Expected `str`, got `int`", "/1/kind"),
        (b'"text"', True, "Expected `object | array`", ""),
        (b'[{"kind":"diagnostic"},[]]', True, "Expected `object`", "/1"),
        (b'[{"kind":"custom","data":"\xff"}]', False, "not valid UTF-8", ""),
        (b'[{"kind":"\xff"}]', False, "Invalid UTF-8", ""),
    ],
)
def test_bad_shapes_are_400_naming_the_problem(
    data: bytes, diagnostic: bool, fragment: str, field: str
) -> None:
    with pytest.raises(BodyError) as caught:
        check_events(data, diagnostic=diagnostic)
    assert caught.value.status == 400
    assert fragment in caught.value.message
    assert caught.value.field == field


def test_a_diagnostic_object_and_event_arrays_are_accepted() -> None:
    assert check_events(b'{"kind":"diagnostic-init","id":{}}', diagnostic=True) == 1
    assert check_events(b'[{"kind":"index"},{"kind":"summary"}]', diagnostic=False) == 2
    assert check_events(b"[]", diagnostic=False) == 0


async def test_a_body_over_the_limit_is_413_before_it_is_all_read() -> None:
    sent: list[dict[str, Any]] = [
        {"type": "http.request", "body": b"x" * 600, "more_body": True},
        {"type": "http.request", "body": b"x" * 600, "more_body": True},
    ]

    async def receive() -> dict[str, Any]:
        return sent.pop(0)

    with pytest.raises(BodyError) as caught:
        await read_body(receive, 1000)
    assert caught.value.status == 413
    assert sent == []


def custom_event_with_data(levels: int) -> bytes:
    return b'[{"kind":"custom","key":"m","data":' + b"[" * levels + b"]" * levels + b"}]"


@pytest.mark.parametrize("levels", [MAX_DOCUMENT_DEPTH - 1, 300, 1_000, 5_000])
def test_a_payload_nested_past_the_limit_is_400_naming_the_place(levels: int) -> None:
    """A body 1,000 deep was a RecursionError in the shape check (a 500 on every endpoint), and
    one 300 deep was accepted, then too deep for the encoders processing and export use."""
    with pytest.raises(BodyError) as caught:
        check_events(custom_event_with_data(levels), diagnostic=False)
    assert caught.value.status == 400
    assert "nested more than 80 arrays or objects deep" in caught.value.message
    # the data is level 3 (under the array and the event): level 81 is 78 steps below it
    expected = "/0/data" + "/0" * (MAX_DOCUMENT_DEPTH - 2) if levels < 1_024 else ""
    assert caught.value.field == expected


def test_a_payload_at_the_limit_and_a_flag_value_at_its_own_limit_are_accepted() -> None:
    assert check_events(custom_event_with_data(MAX_DOCUMENT_DEPTH - 2), diagnostic=False) == 1
    value: Any = "v"
    for _ in range(MAX_DEPTH):
        value = [value]
    counter = {"value": value, "variation": 0, "version": 1, "count": 1}
    summary = {"kind": "summary", "features": {"f": {"default": value, "counters": [counter]}}}
    assert check_events(orjson.dumps([summary]), diagnostic=False) == 1
    diagnostic = {"kind": "diagnostic", "platform": value}
    assert check_events(orjson.dumps(diagnostic), diagnostic=True) == 1
