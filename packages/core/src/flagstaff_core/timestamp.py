"""Instants for the `before`/`after` operators: Unix milliseconds or strict RFC 3339 strings.

Converts to float milliseconds; must not read the clock.
"""

from __future__ import annotations

import datetime
import re

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))$",
    re.ASCII,
)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def parse_instant(value: object) -> float | None:
    """Milliseconds since the epoch, or None when `value` is neither a number nor RFC 3339."""
    if type(value) is int or type(value) is float:
        return float(value)
    if type(value) is not str:
        return None
    match = _RFC3339.match(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    try:
        offset = datetime.timedelta(0)
        if zulu is None:
            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m))
            if sign == "-":
                offset = -offset
        instant = datetime.datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            tzinfo=datetime.timezone(offset),
        )
    except ValueError:
        return None
    whole_seconds = (instant - _EPOCH) // datetime.timedelta(seconds=1)
    millis = whole_seconds * 1000.0
    if fraction:
        millis += int(fraction) / 10 ** len(fraction) * 1000.0
    return millis
