"""Time as the SDK sees it: a monotonic clock for intervals and a wall clock for timestamps.

Injected everywhere time matters so tests can drive it; must not sleep.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def wall(self) -> float: ...


@dataclass(frozen=True, slots=True)
class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()


@dataclass(slots=True)
class ManualClock:
    """A clock that moves only when told to (tests)."""

    now: float = 1_000.0
    wall_offset: float = 1_700_000_000.0

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.now + self.wall_offset

    def advance(self, seconds: float) -> None:
        self.now += seconds
