"""Flag status from evaluation activity: new, active, launched, inactive, stale. Pure rules; the
caller passes the flag's creation time, its activity and `now` (all epoch ms).

- new:      never evaluated, created within the last 7 days.
- inactive: not evaluated in the last 7 days (or never, and older than 7 days).
- active:   evaluated in the last 7 days, serving two or more variations in that window.
- launched: evaluated in the last 7 days, serving one variation only in that window.
- stale:    launched, and evaluated for at least 30 days serving that one variation: the flag
            has done its job and its code path is ready to be removed.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Literal

DAY_MS = 86_400_000
ACTIVE_WINDOW_MS = 7 * DAY_MS
STALE_AFTER_MS = 30 * DAY_MS

Status = Literal["new", "active", "launched", "inactive", "stale"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Activity:
    first_ms: int
    last_ms: int
    recent_variations: Set[int]
    """Variations served in the last 7 days."""
    long_variations: Set[int]
    """Variations served in the last 30 days."""


def flag_status(*, created_ms: int | None, activity: Activity | None, now_ms: int) -> Status:
    if activity is None:
        if created_ms is not None and created_ms > now_ms - ACTIVE_WINDOW_MS:
            return "new"
        return "inactive"
    if activity.last_ms <= now_ms - ACTIVE_WINDOW_MS:
        return "inactive"
    if len(activity.recent_variations) > 1:
        return "active"
    if activity.first_ms <= now_ms - STALE_AFTER_MS and len(activity.long_variations) <= 1:
        return "stale"
    return "launched"
