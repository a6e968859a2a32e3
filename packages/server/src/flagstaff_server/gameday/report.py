"""The figures of a game day, as `report.json` holds them (schema: docs/operations/gameday.md):
totals, the series over time, the nodes' usage and the scenario's checks. Pure: built from
what the recorder, the ledger and the nodes measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flagstaff_server.gameday.recorder import Recorder
from flagstaff_server.gameday.timeline import percentile, propagation_delays

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class NodeFigures:
    name: str
    peak_rss_bytes: int
    peak_cpu_percent: float
    cpu_seconds: float


@dataclass(frozen=True, slots=True)
class PhaseSpan:
    name: str
    start_s: float
    end_s: float


def figures(
    *,
    scenario: str,
    clients: int,
    duration_s: float,
    seed: int,
    recorder: Recorder,
    recovery_s: float | None,
    events: dict[str, int],
    nodes: Sequence[NodeFigures],
    phases: Sequence[PhaseSpan],
    interrupted: bool,
) -> dict[str, Any]:
    """Everything but the checks (which read these figures)."""
    samples = recorder.samples
    evaluations = sum(s.evaluations for s in samples)
    served = sum(s.served for s in samples)
    delays = [
        d * 1000
        for view in recorder.views
        for d in propagation_delays(recorder.timeline, view.holding, since=recorder.started)
    ]
    stale = recorder.staleness_ms
    return {
        "schema": SCHEMA_VERSION,
        "scenario": scenario,
        "clients": clients,
        "duration_s": round(duration_s, 3),
        "seed": seed,
        "interrupted": interrupted,
        "availability": round(served / evaluations, 6) if evaluations else 0.0,
        "availability_had_data": (
            round(recorder.fault_served / recorder.fault_evaluations, 6)
            if recorder.fault_evaluations
            else 1.0
        ),
        "staleness_ms": {
            "p50": round(percentile(stale, 0.5), 1),
            "p99": round(percentile(stale, 0.99), 1),
            "max": round(max(stale, default=0.0), 1),
        },
        "propagation_ms_p99": round(percentile(delays, 0.99), 1),
        "recovery_s": None if recovery_s is None else round(recovery_s, 3),
        "connection_errors": samples[-1].errors if samples else 0,
        "sheds": samples[-1].sheds if samples else 0,
        "events": events,
        "nodes": [
            {
                "name": n.name,
                "peak_rss_bytes": n.peak_rss_bytes,
                "peak_cpu_percent": round(n.peak_cpu_percent, 1),
                "cpu_seconds": round(n.cpu_seconds, 2),
            }
            for n in nodes
        ],
        "phases": [
            {"name": p.name, "start_s": round(p.start_s, 3), "end_s": round(p.end_s, 3)}
            for p in phases
        ],
        "series": {
            "t": [round(s.t, 2) for s in samples],
            "phase": [s.phase for s in samples],
            "availability": [
                round(s.served / s.evaluations, 4) if s.evaluations else 0.0 for s in samples
            ],
            "stale_p99_ms": [round(s.stale_p99_ms, 1) for s in samples],
            "stale_max_ms": [round(s.stale_max_ms, 1) for s in samples],
            "connected": [s.connected for s in samples],
            "errors": [s.errors for s in samples],
            "sheds": [s.sheds for s in samples],
            "events_sent": [s.events_sent for s in samples],
            "events_acknowledged": [s.events_acknowledged for s in samples],
        },
    }
