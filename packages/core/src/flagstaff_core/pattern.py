"""Patterns of the `matches` operator: RE2 syntax and a linear-time search (google-re2), so no
pattern and no context value can make an evaluation backtrack for seconds.

A pattern RE2 cannot compile is invalid and never matches, as in LaunchDarkly's Go evaluator.
Pure: RE2's own error log is switched off, and nothing here keeps state between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# The compiled RE2 object of the google-re2 binding. Its `re`-like wrapper (`re2.compile(...)
# .search`) adds about 3 µs of Python per call (a generator, a match object, offset mapping);
# a `matches` clause only asks whether there is a match, which `RE2.Match` answers directly.
from re2 import _re2

Search = Callable[[str], bool]
"""True when the pattern matches somewhere in the string (Python's `re.search`, RE2 syntax)."""

_UNANCHORED: Any = _re2.RE2.Anchor.UNANCHORED
_NO_MATCH = -1


def _options() -> Any:
    options = _re2.RE2.Options()
    options.never_capture = True  # groups are never read: a faster search, less memory
    options.log_errors = False  # the core does not log; an invalid pattern is a plain result
    return options


_OPTIONS = _options()


def _utf8(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (possible in a Python string, never in JSON): kept as its bytes,
        # which RE2 treats as invalid UTF-8, matched by nothing but itself.
        return text.encode("utf-8", "surrogatepass")


def _compile(pattern: str) -> Any | None:
    regexp = _re2.RE2(_utf8(pattern), _OPTIONS)
    return regexp if regexp.ok() else None


def pattern_error(pattern: str) -> str | None:
    """Why RE2 rejects `pattern` (RE2's own message), or None when it compiles."""
    regexp = _re2.RE2(_utf8(pattern), _OPTIONS)
    if regexp.ok():
        return None
    message: bytes = regexp.error()
    return message.decode("utf-8", "replace")


def compile_search(patterns: Sequence[str]) -> Search | None:
    """One search for "any of `patterns` matches", or None when none of them compiles.

    Valid patterns are joined into one alternation (`(?:a)|(?:b)`), so a clause costs one RE2
    call however many values it has: a valid pattern is a whole expression, so wrapping it in a
    group changes nothing it means, and its flags (`(?i)`) stay inside the group. Not so for a
    `\\Q` quote, which runs to a `\\E` or the end and so could swallow the next pattern:
    those are searched one by one.
    """
    valid = [pattern for pattern in patterns if _compile(pattern) is not None]
    if not valid:
        return None
    regexp = None
    if len(valid) > 1 and not any("\\Q" in pattern for pattern in valid):
        regexp = _compile("|".join(f"(?:{pattern})" for pattern in valid))
    if regexp is None:
        # one pattern, or an alternation over RE2's memory budget: each pattern on its own
        return _any_of([_search(p) for p in valid])
    return _search_with(regexp)


def _search(pattern: str) -> Search:
    regexp = _compile(pattern)
    assert regexp is not None
    return _search_with(regexp)


def _search_with(regexp: Any) -> Search:
    match = regexp.Match
    anchor = _UNANCHORED

    def search(text: str) -> bool:
        try:
            data = text.encode()
        except UnicodeEncodeError:
            data = _utf8(text)
        spans: list[tuple[int, int]] = match(anchor, data, 0, len(data))
        return spans[0][0] != _NO_MATCH

    return search


def _any_of(searches: list[Search]) -> Search:
    if len(searches) == 1:
        return searches[0]
    every = tuple(searches)

    def search(text: str) -> bool:
        for one in every:  # noqa: SIM110 - a loop avoids building a generator per call
            if one(text):
                return True
        return False

    return search
