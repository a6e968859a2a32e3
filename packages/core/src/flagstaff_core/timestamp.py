"""Instants for the `before`/`after` operators: Unix milliseconds or strict RFC 3339 strings.

Converts to float milliseconds the way the official Python SDK does (microsecond precision);
parsing is memoised as a pure function. Must not read the clock.
"""

from __future__ import annotations

import datetime
import functools
import re

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))\Z",
    re.ASCII,
)
_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()


def parse_instant(value: object) -> float | None:
    """Milliseconds since the epoch, or None when `value` is neither a number nor RFC 3339."""
    if type(value) is int or type(value) is float:
        return float(value)
    if type(value) is not str:
        return None
    return _parse(value)


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> float | None:
    match = _RFC3339.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, off_hours, off_minutes = match.groups()
    hours, minutes, seconds = int(hour), int(minute), int(second)
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    try:
        days = datetime.date(int(year), int(month), int(day)).toordinal() - _EPOCH_DAY
    except ValueError:
        return None
    offset = 0
    if sign is not None:
        if int(off_hours) > 23 or int(off_minutes) > 59:
            return None
        offset = int(off_hours) * 3600 + int(off_minutes) * 60
        if sign == "-":
            offset = -offset
    whole = days * 86400 + hours * 3600 + minutes * 60 + seconds - offset
    micros = int((fraction or "")[:6].ljust(6, "0"))
    # Same arithmetic as `timedelta.total_seconds() * 1000.0` in the official SDK.
    return (whole * 10**6 + micros) / 10**6 * 1000.0
