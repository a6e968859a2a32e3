"""The nesting limit's two checks: on JSON text (brackets inside strings, escapes, long chains)
and on parsed JSON (the pointer of the first place too deep), against a plain recursive depth."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from flagstaff_server.nesting import (
    MAX_DEPTH,
    MAX_DOCUMENT_DEPTH,
    is_text_too_deep,
    where_too_deep,
)
from hypothesis import given
from hypothesis import strategies as st


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def nested(levels: int, leaf: Any = 1) -> Any:
    for level in range(levels):
        leaf = [leaf] if level % 2 else {"k": leaf}
    return leaf


# Strings that look like structure: brackets, quotes, escapes, runs of backslashes.
TRICKY = st.text(alphabet='[]{}"\\ax,:', max_size=8)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=40,
)


@given(value=JSON, limit=st.integers(min_value=0, max_value=8))
def test_text_check_agrees_with_the_depth_of_the_value(value: Any, limit: int) -> None:
    for text in (orjson.dumps(value), json.dumps(value, indent=1).encode()):
        assert is_text_too_deep(text, limit) == (depth(value) > limit)


@given(value=JSON, limit=st.integers(min_value=0, max_value=8))
def test_pointer_names_a_container_just_past_the_limit(value: Any, limit: int) -> None:
    found = where_too_deep(value, limit)
    assert (found is not None) == (depth(value) > limit)
    if found is not None:
        inner: Any = value
        for token in found.split("/")[1:]:
            name = token.replace("~1", "/").replace("~0", "~")
            inner = inner[int(name)] if isinstance(inner, list) else inner[name]
        assert isinstance(inner, dict | list)
        assert len(found.split("/")) - 1 == limit  # `limit` steps down from the top


def test_the_limit_itself_fits_and_one_more_level_does_not() -> None:
    assert not is_text_too_deep(orjson.dumps(nested(MAX_DEPTH)))
    assert is_text_too_deep(orjson.dumps(nested(MAX_DEPTH + 1)))
    assert where_too_deep(nested(MAX_DEPTH)) is None
    assert where_too_deep(nested(MAX_DEPTH + 1)) == "/k/0" * (MAX_DEPTH // 2)


def test_brackets_in_strings_neither_hide_nor_add_depth() -> None:
    closers = '"' + "]}" * 50 + '"'
    hidden = f'[{closers}, {"[" * 70}{"]" * 70}, "{"[{" * 50}"]'
    assert is_text_too_deep(hidden.encode(), 64)
    assert not is_text_too_deep(json.dumps(["[" * 500, {"a": "{" * 500}, '\\"[[[']).encode(), 2)


def test_the_first_place_in_document_order_is_named() -> None:
    value = {"a": [1, {"ok": []}], "b": [[[[]]]], "c": [[[[]]]]}
    assert where_too_deep(value, 4, at="/body") == "/body/b/0/0/0"
    assert where_too_deep({"x/y~": [[]]}, 2) == "/x~1y~0/0"
    assert where_too_deep("text", 0) is None


@pytest.mark.parametrize("levels", [MAX_DOCUMENT_DEPTH + 1, 900, 100_000])
def test_chains_far_past_the_limit_are_refused_without_recursion(levels: int) -> None:
    text = b"[" * levels + b"]" * levels
    assert is_text_too_deep(text, MAX_DOCUMENT_DEPTH)
    assert not is_text_too_deep(text, levels)
    chain: list[Any] = []
    for _ in range(levels - 1):
        chain = [chain]
    assert where_too_deep(chain, MAX_DOCUMENT_DEPTH) == "/0" * MAX_DOCUMENT_DEPTH


def test_many_chains_just_under_the_limit_fit() -> None:
    one = "[" * 63 + "]" * 63
    text = f"[{','.join([one] * 2000)}]".encode()
    assert not is_text_too_deep(text)
    assert is_text_too_deep(text, 63)


def test_a_budget_names_the_whole_value_when_finding_the_place_would_cost_more() -> None:
    value = {"wide": list(range(1000)), "deep": nested(10)}
    assert where_too_deep(value, 8, at="/e", budget=10_000) == "/e/deep" + "/0/k" * 3 + "/0"
    assert where_too_deep(value, 8, at="/e", budget=500) == "/e"
    assert where_too_deep(value, 10, at="/e", budget=500) == "/e"  # so: only for a value too deep


def comb(levels: int, tooth: int) -> Any:
    """A chain `levels` deep with a branch `tooth` deep hanging off every level."""
    value: Any = []
    for _ in range(levels - 1):
        branch: Any = []
        for _ in range(tooth - 1):
            branch = [branch]
        value = [branch, value]
    return value


@pytest.mark.parametrize("tooth", [1, 2, 3, 5, 9])
@pytest.mark.parametrize("levels", [60, 100])
def test_long_chains_with_branches_are_measured_exactly(levels: int, tooth: int) -> None:
    value = comb(levels, tooth)
    text = orjson.dumps(value)
    for limit in (depth(value) - 1, depth(value)):
        assert is_text_too_deep(text, limit) == (depth(value) > limit)
