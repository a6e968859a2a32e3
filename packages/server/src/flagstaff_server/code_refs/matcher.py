"""One matcher for every flag key and alias of a run: a single RE2 alternation searched once per
file (RE2 runs it as an automaton, so the time per byte does not grow with the number of keys),
leftmost-longest, with the boundary check done on each hit. Pure: bytes in, hits out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import re2

KEY_INNER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
"""Bytes that continue a flag key: a key found inside a longer word is not a reference to it."""
IDENTIFIER_INNER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
"""Bytes that continue an alias (an identifier in code)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Term:
    """A string searched for: a flag key itself or an alias of one or more keys."""

    text: str
    keys: tuple[str, ...]
    is_alias: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    start: int
    end: int
    term: Term


class Matcher:
    def __init__(self, keys: Mapping[str, list[str]]) -> None:
        """`keys`: each flag key with its aliases."""
        terms: dict[str, Term] = {}
        for key in keys:
            terms[key] = Term(text=key, keys=(key,), is_alias=False)
        for key, aliases in keys.items():
            for alias in aliases:
                known = terms.get(alias)
                if known is None:
                    terms[alias] = Term(text=alias, keys=(key,), is_alias=True)
                elif known.is_alias and key not in known.keys:
                    terms[alias] = Term(text=alias, keys=(*known.keys, key), is_alias=True)
        self._terms = {t.encode(): term for t, term in terms.items()}
        self._regex = None
        if self._terms:
            options = re2.Options()
            options.longest_match = True
            options.max_mem = 512 << 20
            pattern = b"|".join(re2.escape(t) for t in sorted(self._terms, key=len, reverse=True))
            self._regex = re2.compile(pattern, options)

    def hits(self, text: bytes) -> list[Hit]:
        """Every bounded occurrence of a term in `text`, in order."""
        if self._regex is None:
            return []
        found: list[Hit] = []
        position = 0
        search = self._regex.search
        while True:
            match = search(text, position)
            if match is None:
                return found
            start, end = match.start(), match.end()
            term = self._terms[text[start:end]]
            inner = IDENTIFIER_INNER if term.is_alias else KEY_INNER
            if (start == 0 or text[start - 1] not in inner) and (
                end == len(text) or text[end] not in inner
            ):
                found.append(Hit(start=start, end=end, term=term))
                position = end
            else:
                position = start + 1
