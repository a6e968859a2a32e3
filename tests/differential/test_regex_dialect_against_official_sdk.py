"""The `matches` operator against the official Python SDK, which searches with Python's `re`, while
flagstaff_core searches with RE2 (LaunchDarkly's Go evaluator has RE2 syntax too).

Patterns both dialects read alike must give the same answer; every known case where they differ
is listed with each side's answer, checked on both sides (docs/evaluation-core.md, "Regular
expressions"), so a change on either side fails here instead of passing unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from flagstaff_core import decode_context, decode_data, evaluate_key
from official_sdk import load


@dataclass(frozen=True, slots=True)
class Dialect:
    """A pattern and a value on which Python's `re` and RE2 answer differently."""

    why: str
    pattern: str
    value: str
    python: bool
    re2: bool


# Both engines read these the same way; the answers are what both give.
AGREED: tuple[tuple[str, str, bool], ...] = (
    ("^al", "alpha", True),
    ("pha$", "alpha", True),
    ("pha$", "alphabet", False),
    (r"@example\.com$", "a@example.com", True),
    (r"@example\.com$", "a@example.org", False),
    ("gold|silver", "silverware", True),
    ("^(gold|silver)$", "silverware", False),
    ("[0-9]{3}-[0-9]{4}", "call 555-0100", True),
    ("^$", "", True),
    ("", "anything", True),
    ("x*", "", True),
    ("(?i)^ALPHA$", "alpha", True),
    ("(?i)CAFÉ", "café", True),
    ("(?i)k", "\u212a", True),  # KELVIN SIGN folds to k in both
    ("é", "café", True),
    ("^.$", "é", True),  # one code point, not one byte
    ("^.{4}$", "café", True),
    ("^[^a]$", "é", True),
    ("a.b", "a\nb", False),
    ("(?s)a.b", "a\nb", True),
    ("^b", "a\nb", False),
    ("(?m)^b", "a\nb", True),
    (r"\Aab", "ab", True),
    (r"\d", "5", True),
    (r"\bword\b", "a word here", True),
    (r"\B", "ab", True),
    (r"\012", "\n", True),
    ("(?P<year>[0-9]{4})", "in 2024", True),
    ("(a|b)*c", "ababc", True),
    ("^(a+)+$", "aaaa", True),
    ("(", "(", False),  # invalid in both: never matches
    ("a{2,1}", "aa", False),
    ("[a-\\d]", "-", False),
)

DIALECT: tuple[Dialect, ...] = (
    Dialect("lookahead", "^(?=.*@)\\w+", "ab@c", python=True, re2=False),
    Dialect("lookbehind", "(?<!x)y", "ay", python=True, re2=False),
    Dialect("backreference", "(a)\\1", "aa", python=True, re2=False),
    Dialect("named backreference", "(?P<c>a)(?P=c)", "aa", python=True, re2=False),
    Dialect("possessive quantifier", "a++b", "aab", python=True, re2=False),
    Dialect("atomic group", "(?>a+)b", "aab", python=True, re2=False),
    Dialect("verbose flag", "(?x) a b", "ab", python=True, re2=False),
    Dialect("repeat count over 1000", "^a{1001}$", "a" * 1001, python=True, re2=False),
    Dialect("\\Z is Python's end of text", "end\\Z", "the end", python=True, re2=False),
    Dialect("\\z is RE2's end of text", "end\\z", "the end", python=False, re2=True),
    Dialect("$ before a final newline", "end$", "the end\n", python=True, re2=False),
    Dialect("\\d is ASCII in RE2", "^\\d+$", "\u0663", python=True, re2=False),
    Dialect("\\w is ASCII in RE2", "^\\w+$", "café", python=True, re2=False),
    Dialect("\\b is ASCII in RE2", "^\\bcafé\\b$", "café", python=True, re2=False),
    Dialect("\\s is ASCII in RE2", "a\\sb", "a\u00a0b", python=True, re2=False),
    Dialect("[\\b] is a backspace in Python", "[\\b]", "\b", python=True, re2=False),
    Dialect("\\u escape", "\\u00e9", "é", python=True, re2=False),
    Dialect(
        "\\N{name} escape", "\\N{LATIN SMALL LETTER E WITH ACUTE}", "é", python=True, re2=False
    ),
    Dialect("{,n} is {0,n} in Python", "^a{,2}$", "aa", python=True, re2=False),
    Dialect("Unicode classes", "\\p{Greek}", "\u03b1", python=False, re2=True),
    Dialect("\\x{...} escape", "\\x{263a}", "\u263a", python=False, re2=True),
    Dialect("\\Q...\\E quoting", "\\Qa.b\\E", "a.b", python=False, re2=True),
    Dialect("(?<name>...) groups", "(?<n>a)", "a", python=False, re2=True),
    Dialect("ungreedy flag", "(?U)a+", "a", python=False, re2=True),
    Dialect("\\C (any byte)", "\\C", "x", python=False, re2=True),
    Dialect("POSIX classes", "^[[:digit:]]+$", "5", python=False, re2=True),
)


def _flags(cases: list[tuple[str, str]]) -> dict[str, Any]:
    """One flag per pattern: variation 1 when the context's `probe` matches it, else 0."""
    flags = {}
    for index, (pattern, _value) in enumerate(cases):
        key = f"matches-{index}"
        clause = {"contextKind": "user", "attribute": "probe", "op": "matches", "values": [pattern]}
        flags[key] = {
            "key": key,
            "version": 1,
            "on": True,
            "variations": [False, True],
            "offVariation": 0,
            "fallthrough": {"variation": 0},
            "rules": [{"id": "probe", "clauses": [clause], "variation": 1}],
            "salt": "",
        }
    return {"flags": flags, "segments": {}}


def _answers(cases: list[tuple[str, str]]) -> list[tuple[bool, bool]]:
    """(core, official SDK) for each (pattern, value): does the pattern match the value?"""
    data = _flags(cases)
    core_data = decode_data(data)
    answers = []
    with load(data) as sdk:
        for index, (_pattern, value) in enumerate(cases):
            context = {"kind": "user", "key": "probe-user", "probe": value}
            key = f"matches-{index}"
            core = evaluate_key(core_data, key, decode_context(context)).detail.variation_index
            official = sdk.evaluate(key, context)["variationIndex"]
            answers.append((core == 1, official == 1))
    return answers


def test_patterns_both_dialects_read_alike_get_the_same_answer() -> None:
    answers = _answers([(pattern, value) for pattern, value, _ in AGREED])
    wrong = [
        f"{pattern!r} on {value!r}: core {core}, SDK {official}, both should be {expected}"
        for (pattern, value, expected), (core, official) in zip(AGREED, answers, strict=True)
        if (core, official) != (expected, expected)
    ]
    assert not wrong, "\n".join(wrong)
    # both outcomes are exercised
    assert {expected for _, _, expected in AGREED} == {True, False}


# Python warns about "[[:" (a possible nested set) while compiling the POSIX-class case.
@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
def test_each_known_dialect_difference_gives_each_engine_its_own_answer() -> None:
    answers = _answers([(case.pattern, case.value) for case in DIALECT])
    wrong = [
        f"{case.why}: {case.pattern!r} on {case.value!r}: core {core} (RE2 says {case.re2}),"
        f" SDK {official} (Python's re says {case.python})"
        for case, (core, official) in zip(DIALECT, answers, strict=True)
        if (core, official) != (case.re2, case.python)
    ]
    assert not wrong, "\n".join(wrong)
    assert all(case.python != case.re2 for case in DIALECT)
