"""The bounds of an evaluation context as clients send it: each limit answers with the place (a
JSON pointer into the context) of the first part over it; a context at every limit passes."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from flagstaff_server.context_limits import (
    ContextLimits,
    check_context,
    check_path_segment,
    check_size,
)
from flagstaff_server.errors import ContentTooLarge, UriTooLong, ValidationError

LIMITS = ContextLimits(
    max_bytes=1000, max_kinds=3, max_members=5, max_items=4, max_string_length=10, max_depth=3
)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


AT_THE_LIMITS = [
    {"kind": "user", "key": "k", "tags": [1, 2, 3, 4], "s": "x" * 10, "n": nested(3)},
    {"kind": "multi", "a": {"key": "1"}, "b": {"key": "2"}, "c": {"key": "3", "deep": nested(3)}},
    {"key": "old-style", "custom": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}},
]


@pytest.mark.parametrize("context", AT_THE_LIMITS)
def test_a_context_at_every_limit_passes(context: dict[str, Any]) -> None:
    check_context(context, LIMITS)


@pytest.mark.parametrize(
    ("context", "path", "words"),
    [
        ({"kind": "user", "key": "k", "tags": [1, 2, 3, 4, 5]}, "/tags", "5 items"),
        ({"kind": "user", "key": "k", "o": {"list": [[0] * 5]}}, "/o/list/0", "5 items"),
        ({"kind": "user", "key": "k", "s": "x" * 11}, "/s", "11 characters"),
        ({"kind": "user", "key": "k", "t": ["ok", "y" * 11]}, "/t/1", "11 characters"),
        ({"kind": "user", "key": "k", "n" * 11: 1}, "/" + "n" * 11, "name of 11"),
        ({"kind": "user", "key": "k", "a": 1, "b": 2, "c": 3, "d": 4}, "/", "6 members"),
        ({"key": "k", "custom": dict.fromkeys("abcdef", 1)}, "/custom", "6 members"),
        ({"kind": "user", "key": "k", "a/b": nested(4)}, "/a~1b/0/0/0", "nested more than 3"),
        (
            {"kind": "multi", "a": {"key": "1"}, "b": {"key": "2"}, "c": {"key": "3"}, "d": {}},
            "/",
            "4 contexts",
        ),
        ({"kind": "multi", "a": {"key": "1", "n": nested(4)}}, "/a/n/0/0/0", "nested"),
    ],
)
def test_each_limit_names_the_first_place_over_it(
    context: dict[str, Any], path: str, words: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        check_context(context, LIMITS, at="")
    assert raised.value.path == path
    assert words in raised.value.message


def test_the_pointer_starts_where_the_context_sits_in_the_body() -> None:
    with pytest.raises(ValidationError) as raised:
        check_context({"key": "k", "tags": list(range(5)), "s": "x" * 11}, LIMITS, at="/context")
    assert raised.value.path == "/context/tags"


def test_sizes_are_checked_before_anything_is_read_or_decoded() -> None:
    check_size(1000, LIMITS, field="body")
    with pytest.raises(ContentTooLarge) as body:
        check_size(1001, LIMITS, field="body")
    assert body.value.path == "body"
    fits = base64.urlsafe_b64encode(json.dumps({"key": "x" * 980}).encode()).decode()
    check_path_segment(fits, LIMITS)
    too_long = base64.urlsafe_b64encode(json.dumps({"key": "x" * 1000}).encode()).decode()
    with pytest.raises(UriTooLong):
        check_path_segment(too_long, LIMITS)


def test_the_defaults_are_the_documented_ones() -> None:
    limits = ContextLimits()
    documented = (32 * 1024, 16, 256, 256, 8 * 1024, 64)
    assert (
        limits.max_bytes,
        limits.max_kinds,
        limits.max_members,
        limits.max_items,
        limits.max_string_length,
        limits.max_depth,
    ) == documented
