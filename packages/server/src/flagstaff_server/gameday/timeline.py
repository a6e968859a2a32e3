"""The truth a game day measures clients against: when the probe flag's served value changed
(`Timeline`), and what each client held when (`Holding`). From them: how stale a client is
at an instant, and how long each change took to reach it.

Pure: times are seconds on one monotonic clock, handed in.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Timeline:
    """Changes of the expected value, in time order: `(t, value)`; `t` is when the change was
    asked for (before the request), so propagation includes the whole write path."""

    changes: list[tuple[float, str]] = field(default_factory=list)

    def record(self, t: float, value: str) -> None:
        self.changes.append((t, value))

    def current(self) -> str | None:
        return self.changes[-1][1] if self.changes else None

    def expected_at(self, t: float) -> str | None:
        i = bisect.bisect_right([c[0] for c in self.changes], t)
        return self.changes[i - 1][1] if i else None

    def staleness(self, held: str | None, now: float) -> float | None:
        """Seconds since `held` stopped being the expected value (0 while it is); None for a
        client holding nothing (it serves defaults: counted in availability, not here)."""
        if held is None or not self.changes:
            return None
        if self.changes[-1][1] == held:
            return 0.0
        for index in range(len(self.changes) - 1, -1, -1):
            if self.changes[index][1] == held:
                return max(0.0, now - self.changes[index + 1][0])
        return max(0.0, now - self.changes[0][0])


@dataclass
class Holding:
    """What one client held over time: `(t, value)` at each change of what it serves."""

    transitions: list[tuple[float, str | None]] = field(default_factory=list)

    def hold(self, t: float, value: str | None) -> None:
        if not self.transitions or self.transitions[-1][1] != value:
            self.transitions.append((t, value))

    def held_at(self, t: float) -> str | None:
        value: str | None = None
        for when, each in self.transitions:
            if when > t:
                break
            value = each
        return value


def propagation_delays(
    timeline: Timeline, holding: Holding, since: float = float("-inf")
) -> list[float]:
    """For each change asked for at `since` or later that the client came to hold before the
    next change, how long after it was asked for the client held it (0 when it already did).
    `since`: when every client was current; a change before it (the seed value, asked before
    any client connected) would measure connecting, not propagation."""
    delays: list[float] = []
    changes = timeline.changes
    for index, (asked, value) in enumerate(changes):
        if asked < since:
            continue
        until = changes[index + 1][0] if index + 1 < len(changes) else float("inf")
        if holding.held_at(asked) == value:
            delays.append(0.0)
            continue
        for when, held in holding.transitions:
            if asked <= when < until and held == value:
                delays.append(when - asked)
                break
    return delays


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` in [0, 1]) of `values`; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1))
    return ordered[rank]


def caught_up_at(timeline: Timeline, holding: Holding, since: float) -> float | None:
    """When the client first held the value expected at `since` or a newer one (`since` itself
    when it already did); None when it never did. Later edits keep moving the expected value,
    so "current at some instant" is not asked for: catching up with the state at `since` is."""
    wanted = {value for t, value in timeline.changes if t >= since}
    expected = timeline.expected_at(since)
    if expected is not None:
        wanted.add(expected)
    if holding.held_at(since) in wanted:
        return since
    for when, value in holding.transitions:
        if when >= since and value in wanted:
            return when
    return None


def last_caught_up(
    timeline: Timeline, holdings: Iterable[tuple[str, Holding]], since: float
) -> tuple[str, float | None] | None:
    """The client that caught up last after `since` (`caught_up_at`) and its seconds, or the
    first that never did with None; None for no client. What a recovery check names, so a run
    over its bound says whom it waited for."""
    last: tuple[str, float | None] | None = None
    for name, holding in holdings:
        caught = caught_up_at(timeline, holding, since)
        if caught is None:
            return name, None
        if last is None or (last[1] is not None and caught - since > last[1]):
            last = name, caught - since
    return last


def fleet_caught_up(timeline: Timeline, holdings: Iterable[Holding], since: float) -> float | None:
    """How long after `since` the last of the clients caught up with the flag as it stood then
    (`caught_up_at`); None while one has not."""
    last = last_caught_up(timeline, (("", holding) for holding in holdings), since)
    if last is None:
        return 0.0
    seconds = last[1]
    return None if seconds is None else max(0.0, seconds)


def staleness_at(timeline: Timeline, holding: Holding, t: float) -> float | None:
    """How stale the client was at instant `t` (past or present): seconds since the value it
    held then stopped being the expected one; None when it held nothing."""
    held = holding.held_at(t)
    if held is None:
        return None
    past = [change for change in timeline.changes if change[0] <= t]
    if not past or past[-1][1] == held:
        return 0.0
    for index in range(len(past) - 1, -1, -1):
        if past[index][1] == held:
            return max(0.0, t - past[index + 1][0])
    return max(0.0, t - past[0][0])


def max_staleness(timeline: Timeline, holding: Holding, start: float, end: float) -> float | None:
    """The most stale the client was over [start, end]; None when it held nothing throughout.
    Staleness only grows between the client's changes, so its peaks are at the instant before
    each change it made, and at `end`."""
    instants = [start, end]
    instants += [max(start, when - 1e-6) for when, _ in holding.transitions if start < when <= end]
    found = [s for t in instants if (s := staleness_at(timeline, holding, t)) is not None]
    return max(found, default=None)
