"""How deeply JSON may nest: the one limit for every value Flagstaff stores or serves (variation
values, custom properties, context attributes, event data) and the two checks that apply it, to
JSON text (fast, for every body) and to parsed JSON (naming the place). Pure; both checks are
iterative, so no input can exhaust the stack.

Depth counts arrays and objects inside one another, the outermost included: a scalar is 0 deep,
`[]` and `{"a": 1}` are 1 deep, `[[1]]` is 2 deep.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate
from operator import neg
from typing import Any, Final

MAX_DEPTH: Final = 64
"""The deepest a value may nest. Far beyond what flag values and contexts hold, and far enough
below the 254 levels orjson can encode that a value still encodes inside the deepest envelope
Flagstaff puts around it (an audit entry in a listing puts 12 levels around a clause value)."""

ENVELOPE_DEPTH: Final = 16
"""Levels a request body, a stored document or an event payload may add around its values: a
clause value sits 9 deep in a flag of an import file, 11 deep in a JSON Patch replacing a whole
flag, and an SDK's summary event carries a flag value 5 deep inside the event."""

MAX_DOCUMENT_DEPTH: Final = MAX_DEPTH + ENVELOPE_DEPTH
"""The deepest a whole body or stored document may nest: whatever obeys `MAX_DEPTH` fits."""

# JSON text reduced to its brackets: both kinds become `[`/`]` (only the depth matters) and the
# quotes stay until the strings' contents are known to hold no bracket.
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_ALL_BUT_BRACKETS_AND_QUOTES = bytes(set(range(256)) - set(b'[]{}"'))
# `[` counts +1 and `]` -1 as signed bytes.
_STEPS = bytes.maketrans(b"[]", b"\x01\xff")
_RUN = re.compile(rb"\[+|\]+")


def too_deep_message(limit: int = MAX_DEPTH) -> str:
    return f"nested more than {limit} arrays or objects deep"


def is_text_too_deep(text: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON text nests deeper than `limit`. Exact for well-formed JSON, so parse or
    validate the text before or after (for malformed text the answer means nothing). Runs at
    the speed of a few byte scans: the hot paths (event bodies, every API body) call it."""
    skeleton = _brackets(text)
    # Removing every `[]` takes exactly one level off every branch, so the depth is the number
    # of rounds until nothing is left. Shallow, broad JSON (what SDKs and scripts send) is gone
    # after a few cheap rounds; once a round barely shortens it (long chains), the rest is
    # counted by a running sum instead, so hostile text costs one more pass, not `limit`.
    peeled = 0
    while skeleton and peeled < limit:
        shorter = skeleton.replace(b"[]", b"")
        peeled += 1
        slow = len(shorter) * 4 > len(skeleton) * 3
        skeleton = shorter
        if slow:
            break
    if not skeleton:
        return False
    if peeled >= limit:
        return True
    return peeled + _deepest(skeleton) > limit


def _deepest(skeleton: bytes) -> int:
    """The depth of balanced `[`/`]` text: a running sum over its runs of one bracket when they
    are long (chains), over the brackets themselves otherwise."""
    runs = 1 + skeleton.count(b"[]") + skeleton.count(b"][")
    if runs * 8 > len(skeleton):
        return max(accumulate(array("b", skeleton.translate(_STEPS))))
    # runs alternate, opening ones first
    lengths = list(map(len, _RUN.findall(skeleton)))
    lengths[1::2] = map(neg, lengths[1::2])
    return max(accumulate(lengths))


def _brackets(text: bytes) -> bytes:
    """The brackets of JSON text outside strings, all written `[` and `]`."""
    if b"\\" in text and b'\\"' in text:
        # Escaped backslashes go first, then escaped quotes: what is left of `"` delimits strings.
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = text.translate(_ONE_KIND, _ALL_BUT_BRACKETS_AND_QUOTES)
    quotes = skeleton.count(b'"')
    if not quotes:
        return skeleton
    # A string without brackets leaves `""`. When every run of quotes has an even length (so
    # the `""` pairs account for every quote), no string holds a bracket and the quotes can go.
    if 2 * skeleton.count(b'""') == quotes:
        return skeleton.translate(None, b'"')
    # Otherwise every quote still delimits a string by its parity, which dropping `""` pairs
    # keeps; what lies between an odd quote and the next is inside a string.
    return b"".join(skeleton.replace(b'""', b"").split(b'"')[::2])


def where_too_deep(
    value: Any, limit: int = MAX_DEPTH, at: str = "", *, budget: int | None = None
) -> str | None:
    """The JSON pointer (after `at`, the pointer of `value` itself) of the first array or object
    in `value` that lies deeper than `limit`, in document order; None when `value` fits.

    With a `budget`, at most that many members are looked at; when it runs out first the answer
    is `at`, so pass one only for a value already known to be too deep (`is_text_too_deep`), to
    name the place precisely when that is cheap and coarsely when the value is huge."""
    if not isinstance(value, dict | list):
        return None
    pending: list[tuple[Any, str, int]] = [(value, at, 1)]
    while pending:
        node, path, level = pending.pop()
        if level > limit:
            return path
        if budget is not None:
            budget -= len(node)
            if budget < 0:
                return at
        members = node.items() if isinstance(node, dict) else enumerate(node)
        nested = [
            (child, f"{path}/{_token(name)}", level + 1)
            for name, child in members
            if isinstance(child, dict | list)
        ]
        pending.extend(reversed(nested))
    return None


def _token(name: object) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")
