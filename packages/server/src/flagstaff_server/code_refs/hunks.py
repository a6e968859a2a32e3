"""A file's hits as LaunchDarkly's hunks: per flag key, the lines of its hits widened by the
context lines and merged where they touch, with the aliases seen in each. Pure."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from typing import Any

from flagstaff_server.code_refs.matcher import Hit

MAX_LINE_CHARS = 500
"""A longer line (minified code, data) is cut here in a hunk, as ld-find-code-refs does."""

Hunk = dict[str, Any]


def line_starts(text: bytes) -> list[int]:
    """The offset each line starts at."""
    starts = [0]
    find = text.find
    at = find(b"\n")
    while at != -1:
        starts.append(at + 1)
        at = find(b"\n", at + 1)
    return starts


def hunks_of(text: bytes, hits: list[Hit], *, project: str, context_lines: int) -> list[Hunk]:
    """The hunks of one file, ordered by flag key then line. `context_lines` < 0: no source
    lines are sent, only where each reference is."""
    starts = line_starts(text)
    lines_of: dict[str, dict[int, set[str]]] = {}
    for hit in hits:
        line = bisect_right(starts, hit.start)  # 1-based
        for key in hit.term.keys:
            aliases = lines_of.setdefault(key, {}).setdefault(line, set())
            if hit.term.is_alias:
                aliases.add(hit.term.text)
    width = max(context_lines, 0)
    last_line = len(starts)
    decoded: list[str] | None = None
    found: list[Hunk] = []
    for key in sorted(lines_of):
        for first, last, aliases in _ranges(lines_of[key], width, last_line):
            text_lines = ""
            if context_lines >= 0:
                if decoded is None:
                    decoded = text.decode("utf-8", errors="replace").split("\n")
                text_lines = "\n".join(line[:MAX_LINE_CHARS] for line in decoded[first - 1 : last])
            found.append(
                {
                    "startingLineNumber": first,
                    "lines": text_lines,
                    "projKey": project,
                    "flagKey": key,
                    "aliases": sorted(aliases),
                    "contentHash": hashlib.sha1(text_lines.encode()).hexdigest(),
                }
            )
    return found


def _ranges(
    lines: dict[int, set[str]], width: int, last_line: int
) -> list[tuple[int, int, set[str]]]:
    """Line ranges [first, last] around the hit lines, merged where they overlap or touch."""
    merged: list[tuple[int, int, set[str]]] = []
    for line in sorted(lines):
        first, last = max(1, line - width), min(last_line, line + width)
        if merged and first <= merged[-1][1] + 1:
            previous = merged[-1]
            merged[-1] = (previous[0], max(previous[1], last), previous[2] | lines[line])
        else:
            merged.append((first, last, set(lines[line])))
    return merged
