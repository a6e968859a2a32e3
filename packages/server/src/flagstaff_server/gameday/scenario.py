"""What a game-day scenario is: named phases (each a share of the run's duration) with an
action at the start of each, run against a live topology, and the checks its report must pass.
`Drill` is what an action gets: the topology, the change driver, the timeline and a place for
the scenario's own measurements.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flagstaff_server.gameday.event_fleet import EventLedger
from flagstaff_server.gameday.fleet import ClientView
from flagstaff_server.gameday.timeline import Timeline, fleet_caught_up, last_caught_up
from flagstaff_server.gameday.topology import KILLED, Topology, set_probe_value


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


@dataclass
class Drill:
    """The live state a scenario's actions work on."""

    topology: Topology
    timeline: Timeline
    views: list[ClientView]
    ledger: EventLedger = field(default_factory=EventLedger)
    """The event senders' ledger."""
    driving: bool = True
    """Whether the change driver edits the probe flag (paused while an override holds it)."""
    edits_accepted: int = 0
    edits_refused: int = 0
    value_number: int = 0
    notes: dict[str, Any] = field(default_factory=dict)
    fault_began: float | None = None
    fault_ended: float | None = None
    """Seconds since the start, set by actions (`begin_fault`, `end_fault`)."""
    started: float = field(default_factory=time.monotonic)

    def now(self) -> float:
        return time.monotonic() - self.started

    def events_acknowledged(self) -> int:
        return len(self.ledger.acknowledged)

    def event_failures(self) -> int:
        """Event posts that failed or were shed (each retried, to the other region first)."""
        return self.ledger.errors + self.ledger.sheds

    def begin_fault(self) -> None:
        self.fault_began = self.now()

    def end_fault(self) -> None:
        self.fault_ended = self.now()

    async def edit(self) -> bool:
        """One change driver edit: variation 0 serves the next `v<n>`."""
        value = f"v{self.value_number + 1}"
        asked = time.monotonic()
        with self.topology.api() as api:
            done = await asyncio.to_thread(set_probe_value, api, value)
        if done:
            self.value_number += 1
            self.timeline.record(asked, value)
            self.edits_accepted += 1
        else:
            self.edits_refused += 1
        return done

    async def kill_probe(self) -> dict[str, bool]:
        """The emergency kill through the break-glass path (no API, no database)."""
        self.driving = False
        self.timeline.record(time.monotonic(), KILLED)
        return await asyncio.to_thread(self.topology.break_glass)

    async def clear_kill(self) -> dict[str, bool]:
        """End the override: the flag serves what it was last set to, and edits resume."""
        self.timeline.record(time.monotonic(), f"v{self.value_number}")
        accepted = await asyncio.to_thread(self.topology.break_glass, clear=True)
        self.driving = True
        return accepted

    def caught_up_since(self, since: float) -> float | None:
        """Seconds from `since` (monotonic) until every client had caught up with the flag as
        it stood then; None while one has not. The one "every client current" step of every
        scenario: a phase's end (`Phase.until`) and its recovery figures."""
        return fleet_caught_up(self.timeline, (v.holding for v in self.views), since)

    def waited_for(self, since: float | None, region: str | None = None) -> str | None:
        """The client (of `region`, or any) that caught up last after `since` (monotonic), as
        "name (kind): seconds": whom a recovery figure waited for."""
        if since is None:
            return None
        views = {v.name: v for v in self.views if region is None or v.region == region}
        last = last_caught_up(self.timeline, ((n, v.holding) for n, v in views.items()), since)
        if last is None:
            return None
        name, seconds = last
        waited = "never" if seconds is None else f"{seconds:.2f} s"
        return f"{name} ({views[name].kind}, {views[name].sheds} sheds): {waited}"

    def fault_end(self) -> float | None:
        """The end of the fault, monotonic."""
        return None if self.fault_ended is None else self.started + self.fault_ended

    def recovered(self) -> bool:
        """Every client caught up with the flag as it stood at the end of the fault."""
        if self.fault_ended is None:
            return False
        return self.caught_up_since(self.started + self.fault_ended) is not None

    def holding_at_end_of(self, value: str, phase_end: float) -> int:
        """How many clients held `value` at `phase_end` (monotonic)."""
        return sum(v.holding.held_at(phase_end) == value for v in self.views)


Action = Callable[[Drill], Awaitable[None]]


async def nothing(_drill: Drill) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Phase:
    name: str
    share: float
    """Of the run's duration."""
    action: Action = nothing
    min_seconds: float = 0.0
    """The phase lasts at least this long after its action, whatever the run's duration;
    with `until`, at most this long (or its share, when longer)."""
    until: Callable[[Drill], bool] | None = None
    """Ends the phase, once its share of the duration has passed, as soon as it holds (polled
    every tick) instead of waiting out `min_seconds` (`Drill.recovered`: every client current)."""


def no_settings(_clients: int) -> dict[str, str]:
    return {}


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    summary: str
    phases: tuple[Phase, ...]
    checks: Callable[[Mapping[str, Any], Drill], list[Check]]
    delivery_settings: Callable[[int], dict[str, str]] = no_settings
    """Environment settings for the delivery nodes, given the number of protocol clients (a
    scenario's admission limits scale with its fleet)."""
    compare: Callable[[Drill], dict[str, Any]] | None = None
    """A side-by-side table for the report (`{"columns": [...], "rows": [[...], ...]}`)."""
    standby_api: bool = False
    """Region B runs an API node on its standby (for a promotion)."""


# the checks most scenarios make ------------------------------------------------------------------


def served_throughout(report: Mapping[str, Any]) -> Check:
    """Availability 1 for the clients that held data when the fault began."""
    availability = report["availability_had_data"]
    return Check(
        "evaluations served from data throughout",
        availability == 1.0,
        f"availability {availability:.4f} for clients with data before",
    )


def no_event_lost(report: Mapping[str, Any]) -> Check:
    events = report["events"]
    return Check(
        "no event lost or counted twice",
        events["lost"] == 0 and events["duplicated"] == 0,
        f"{events['acknowledged']} acknowledged, {events['lost']} lost, "
        f"{events['duplicated']} duplicated",
    )


def current_within(
    bound_s: float, recovery_s: float | None, after: str, waited_for: str | None = None
) -> Check:
    """Every client caught up within `bound_s` of `after` (what `recovery_s` counts from);
    `waited_for`: the client that came last (`Drill.waited_for`), named in the detail."""
    last = "" if waited_for is None else f"; last: {waited_for}"
    return Check(
        f"every client current within {bound_s:g} s {after}",
        recovery_s is not None and recovery_s <= bound_s,
        f"{'never' if recovery_s is None else f'{recovery_s:.2f} s'} {after}{last}",
    )
