"""A clock that moves only when a test says so, for the `Clock` the server is handed
(`Flagstaff(clock=...)`, `ControlPlane(clock=...)`): schedules, retries and leases are tested
without sleeping."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


@dataclass
class FakeClock:
    now: datetime = field(default_factory=lambda: datetime(2026, 1, 1, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        """Move on by `timedelta(**delta)`."""
        self.now += timedelta(**delta)

    @property
    def millis(self) -> int:
        return int(self.now.timestamp() * 1000)
