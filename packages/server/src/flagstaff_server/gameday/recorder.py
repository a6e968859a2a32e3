"""Samples of a game day: at every tick, each client is asked for the probe flag (an
evaluation, served from data or from the code default), its staleness is measured against
the timeline, and the fleet's connections, errors and sheds and the events' progress are
counted. The recorder keeps the series the report is built from.

It reads client views and the ledger; it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flagstaff_server.gameday.event_fleet import EventLedger
from flagstaff_server.gameday.fleet import STREAMING, ClientView
from flagstaff_server.gameday.timeline import Timeline, fleet_caught_up, percentile


@dataclass(frozen=True, slots=True)
class Sample:
    t: float
    """Seconds since the run started."""
    phase: str
    evaluations: int
    served: int
    """Evaluations served from flag data (the rest got the code default)."""
    stale_p50_ms: float
    stale_p99_ms: float
    stale_max_ms: float
    current: int
    """Clients holding the expected value."""
    connected: int
    errors: int
    sheds: int
    events_sent: int
    events_acknowledged: int


@dataclass
class Recorder:
    started: float
    timeline: Timeline
    views: list[ClientView]
    ledger: EventLedger
    samples: list[Sample] = field(default_factory=list)
    staleness_ms: list[float] = field(default_factory=list)
    had_data: set[str] = field(default_factory=set)
    """Clients that held data before the fault began (`mark_fault`)."""
    fault_evaluations: int = 0
    fault_served: int = 0
    fault_began: float | None = None

    def mark_fault(self, now: float, had_data: set[str]) -> None:
        self.fault_began = now
        self.had_data = had_data

    def sample(self, now: float, phase: str) -> Sample:
        served = 0
        stale: list[float] = []
        current = 0
        for view in self.views:
            if view.value is not None:
                served += 1
                if view.name in self.had_data:
                    self.fault_served += 1
            if view.name in self.had_data:
                self.fault_evaluations += 1
            staleness = self.timeline.staleness(view.value, now)
            if staleness is not None:
                stale.append(staleness * 1000)
                current += staleness == 0.0
        self.staleness_ms.extend(stale)
        sample = Sample(
            t=now - self.started,
            phase=phase,
            evaluations=len(self.views),
            served=served,
            stale_p50_ms=percentile(stale, 0.5),
            stale_p99_ms=percentile(stale, 0.99),
            stale_max_ms=max(stale, default=0.0),
            current=current,
            connected=sum(v.connected for v in self.views if v.kind in STREAMING),
            errors=sum(v.errors for v in self.views),
            sheds=sum(v.sheds for v in self.views),
            events_sent=self.ledger.sent,
            events_acknowledged=len(self.ledger.acknowledged),
        )
        self.samples.append(sample)
        return sample

    def recovery_seconds(self, fault_ended: float | None) -> float | None:
        """From the end of the fault (seconds since start) until every client had caught up
        with the flag as it stood then; None when one never did."""
        if fault_ended is None:
            return None
        since = self.started + fault_ended
        return fleet_caught_up(self.timeline, (view.holding for view in self.views), since)
