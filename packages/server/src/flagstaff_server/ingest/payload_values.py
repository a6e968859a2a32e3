"""Values read from an accepted event payload the way processing keeps them: its JSON (numbers
no 64-bit value can hold read as null), event times within (0, year 9999], counts, and texts no
wider than the analytics columns that hold them (nor holding NUL). Pure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

import orjson

from flagstaff_server.domain.document import KEY_MAX_LENGTH

HOUR_MS = 3_600_000
MAX_MS = 253_402_300_799_999
"""The last millisecond of the year 9999: a time past it (or not positive) is replaced by the
payload's receive time, as a missing one is."""
MAX_COUNT = 2**31 - 1
"""The largest summary counter or dropped-event count taken from one event; a larger one is
malformed. It keeps every stored sum far inside a 64-bit column: one hour's row of a flag and
variation would need more than 4 billion such counters to reach it."""
STATE_CHARS = 32
"""The longest `dataSource.state` or `.source` kept (the SDK's values are short words)."""
KEY_CHARS: Final = KEY_MAX_LENGTH
"""The longest project, environment, flag or custom event key kept: the management API's limit
on keys (a longer flag key names no flag). The analytics columns that hold keys are this wide."""
NAME_CHARS: Final = 255
"""The longest context kind, diagnostic id, SDK name, version or wrapper kept (their columns'
width); an event with a longer one is skipped, or keeps no name, as with a malformed one."""
CONTEXT_KEY_CHARS: Final = 1024
"""The longest context key kept (its columns' width)."""


def load_payload(payload: bytes) -> Any:
    """A stored payload's JSON (None if it is not JSON at all)."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        return lenient_loads(payload)


def lenient_loads(payload: bytes) -> Any:
    """A payload that orjson refuses although acceptance let it in: valid JSON holding a number
    no 64-bit value can hold (`1e400`, a 30-digit integer), in a member acceptance skipped. Read
    with such numbers as null, so the payload's other events still count and everything kept
    can be stored and exported. None if it is not JSON at all."""
    try:
        return json.loads(payload, parse_int=_bounded_int, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return None


def _bounded_int(text: str) -> int | None:
    if len(text) > 21:  # past any 64-bit value, and never hits int()'s digit limit
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**64 else None


def _finite_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def hour_of(ms: int) -> int:
    return ms - ms % HOUR_MS


def created_of(event: Mapping[str, Any], fallback: int) -> int:
    """An event's time: `endDate` for a summary, else `creationDate`."""
    if event.get("kind") == "summary":
        return as_ms(event.get("endDate"), fallback)
    return as_ms(event.get("creationDate"), fallback)


def as_ms(value: object, fallback: int) -> int:
    """A time in epoch milliseconds from an event, or `fallback` when it is missing or outside
    (0, MAX_MS]. JSON numbers are exactly int or float (a bool is neither here)."""
    if type(value) is int:
        return value if 0 < value <= MAX_MS else fallback
    if type(value) is float and 0 < value <= MAX_MS:
        return int(value)
    return fallback


def text_or_none(value: object) -> str | None:
    return value if is_text(value, NAME_CHARS) else None


def is_text(value: object, limit: int) -> TypeGuard[str]:
    """A string the analytics store can keep in a text column `limit` characters wide:
    PostgreSQL's cannot hold NUL nor more characters than the column's width, so a key like that
    is malformed (it would fail every retry of its batch)."""
    return type(value) is str and len(value) <= limit and "\x00" not in value
