"""The `matches` operator's patterns: RE2 syntax, one linear-time search per clause, and invalid
patterns that never match (where Python's `re` and RE2 differ, tests/differential has each case).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
from flagstaff_core import decode_context, decode_data, evaluate_key
from flagstaff_core.pattern import compile_search, pattern_error


def matches(clause_values: list[Any], value: Any, *, nested: bool = False) -> bool:
    """Whether a one-clause `matches` rule matches a user whose `attr` (or `/o/attr`) is
    `value`; both compiled forms (a top-level attribute and a path) are checked alike."""
    attribute = "/o/attr" if nested else "attr"
    clause = {
        "contextKind": "user",
        "attribute": attribute,
        "op": "matches",
        "values": clause_values,
    }
    flag = {
        "on": True,
        "variations": [False, True],
        "fallthrough": {"variation": 0},
        "rules": [{"id": "r", "variation": 1, "clauses": [clause]}],
    }
    context: dict[str, Any] = {"kind": "user", "key": "k"}
    if nested:
        context["o"] = {"attr": value}
    else:
        context["attr"] = value
    detail = evaluate_key(decode_data({"flags": {"f": flag}}), "f", decode_context(context)).detail
    assert detail.reason.kind.name in ("RULE_MATCH", "FALLTHROUGH"), detail.reason
    return bool(detail.value)


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize(
    ("clause_values", "value", "expected"),
    [
        (["(?=a)a"], "a", False),  # lookahead: not RE2, so invalid, so never matches
        (["(?=a)a", "^a"], "a", True),  # the valid value still counts
        (["end\\z"], "the end", True),
        (["end$"], "the end\n", False),  # `$` is the end of the text only
        (["^\\d$"], "\u0663", False),  # ASCII classes
        (["\\p{Greek}"], "\u03b1", True),
        (["(?i)a", "b"], "B", False),  # a value's flags stay inside that value
        (["(?i)a", "b"], "A", True),
        (["\\Qa", "\\Qz\\E"], "z", True),  # a quote does not swallow the next value
        (["\\Qa.b"], "a.b", True),
        (["\\Qa.b"], "axb", False),
        (["é"], "café", True),
        ([".", "x"], ["y", "x"], True),  # an array matches when any element does
        (["^x$"], ["y", "z"], False),
        (["1"], 1, False),  # only strings are searched
    ],
)
def test_matches_uses_re2_syntax(
    clause_values: list[Any], value: Any, expected: bool, nested: bool
) -> None:
    assert matches(clause_values, value, nested=nested) is expected


def test_a_string_python_cannot_encode_is_still_searched() -> None:
    # a lone surrogate gets into a context only from Python code, never from JSON
    assert matches(["x"], "x\ud800")
    assert not matches(["^y"], "x\ud800")


def test_pattern_error_names_what_re2_rejects() -> None:
    assert pattern_error("^(a+)+$") is None
    assert pattern_error("(?<=a)b") == "invalid perl operator: (?<="
    assert pattern_error("(") == "missing ): ("
    assert compile_search(["(", "(?=a)"]) is None


def test_many_values_become_one_search() -> None:
    search = compile_search([f"^v{i}$" for i in range(200)])
    assert search is not None
    assert [search(text) for text in ("v199", "v0", "v200", "v1x")] == [True, True, False, False]


def test_a_catastrophic_pattern_answers_at_once() -> None:
    # `(a+)+$` takes Python's backtracking `re` ~2^n steps on n a's and a mismatch at the end:
    # minutes for 30 characters, "forever" for these. The search runs in a child process so
    # a backtracking engine fails the test at the deadline instead of hanging the test run.
    code = textwrap.dedent(
        """
        from flagstaff_core import decode_context, decode_data, evaluate_key
        clause = {"attribute": "email", "op": "matches", "values": ["(a+)+$", "^(\\\\w+\\\\s?)*$"]}
        rules = [{"id": "r", "variation": 1, "clauses": [clause]}]
        flag = {"on": True, "variations": [0, 1], "fallthrough": {"variation": 0}, "rules": rules}
        data = decode_data({"flags": {"f": flag}})
        for size in (30, 1_000, 100_000):
            for text in ("a" * size + "!", "word " * size + "!"):
                context = decode_context({"key": "k", "email": text})
                print(evaluate_key(data, "f", context).detail.value, end=" ")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=20, check=True
    )
    # neither pattern can match before the final "!", so every evaluation falls through
    assert result.stdout.split() == ["0"] * 6
