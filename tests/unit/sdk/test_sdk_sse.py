"""The SSE parser: fields, multi-line data, comments, retry, ids and every line ending, fed in
chunks of any size."""

from __future__ import annotations

import itertools

from flagstaff_sdk.sse import SseComment, SseEvent, SseItem, SseParser, SseRetry
from hypothesis import given, settings
from hypothesis import strategies as st

STREAM = (
    b"\xef\xbb\xbf: hello\n"
    b"retry: 1500\n\n"
    b'event: put\ndata: {"a":\r\ndata: 1}\r\n\r\n'
    b"id: 7\rdata: plain\r\r"
    b"event: ignored-without-data\n\n"
    b"data:no-space\ndata\n\n"
    b"retry: soon\n"
    b"event: patch\ndata: x\n\n"
)
EXPECTED: list[SseItem] = [
    SseComment("hello"),
    SseRetry(1500),
    SseEvent("put", '{"a":\n1}'),
    SseEvent("message", "plain", "7"),
    SseEvent("message", "no-space\n", "7"),
    SseEvent("patch", "x", "7"),
]


def parse(chunks: list[bytes]) -> list[SseItem]:
    parser = SseParser()
    return [item for chunk in chunks for item in parser.feed(chunk)]


def test_parser_reads_fields_multiline_data_comments_and_retry() -> None:
    assert parse([STREAM]) == EXPECTED


def test_parser_gives_the_same_events_fed_one_byte_at_a_time() -> None:
    assert parse([STREAM[i : i + 1] for i in range(len(STREAM))]) == EXPECTED


@settings(max_examples=60)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_parser_gives_the_same_events_for_any_chunking(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in itertools.pairwise(points)]
    assert parse(chunks) == EXPECTED


def test_a_crlf_split_across_chunks_is_one_line_end() -> None:
    assert parse([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]) == [SseEvent("message", "a\nb")]


def test_an_incomplete_event_is_not_dispatched_until_its_blank_line() -> None:
    parser = SseParser()
    assert list(parser.feed(b"event: put\ndata: {}\n")) == []
    assert list(parser.feed(b"\n")) == [SseEvent("put", "{}")]
    assert parser.last_event_id is None


def test_multibyte_characters_split_across_chunks_survive() -> None:
    text = "data: caf\u00e9 \u2713\n\n".encode()
    assert parse([text[:9], text[9:12], text[12:]]) == [SseEvent("message", "caf\u00e9 \u2713")]
