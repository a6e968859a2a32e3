"""Prometheus text for the relay's own gauges and counters (upstream connection state, data age,
Redis store, event spool), appended to delivery's metrics on `/metrics`. Reads; changes nothing.
Takes what it renders as arguments: the relay (`edge`) reads its parts and calls `render`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from flagstaff_sdk.status import DataSourceState

from flagstaff_server.delivery.prometheus import Exposition, label_value
from flagstaff_server.relay.daemon_store import RedisDaemonStore
from flagstaff_server.relay.forwarder import EventForwarder
from flagstaff_server.relay.spool import EventSpool

PREFIX = "flagstaff_relay_"


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentReading:
    """One environment as `/metrics` shows it."""

    name: str
    state: DataSourceState
    """The connection state `/status` reports."""
    data_confirmed: float | None
    """Monotonic time the data was last known current; None before it ever was."""
    changes: int
    store: RedisDaemonStore | None


def render(
    environments: Iterable[EnvironmentReading],
    *,
    spool: EventSpool | None,
    forwarder: EventForwarder | None,
    event_counts: Counter[str],
) -> bytes:
    exposition = Exposition(PREFIX)
    metric = exposition.metric

    now = time.monotonic()
    states: list[tuple[str, float]] = []
    ages: list[tuple[str, float]] = []
    changes: list[tuple[str, float]] = []
    redis_up: list[tuple[str, float]] = []
    redis_counts: list[tuple[str, float]] = []
    for state in environments:
        env = f'environment="{label_value(state.name)}"'
        current = state.state
        states.extend(
            (f'{{{env},state="{s.value}"}}', 1 if s is current else 0) for s in DataSourceState
        )
        if state.data_confirmed is not None:
            age = 0.0 if current is DataSourceState.VALID else now - state.data_confirmed
            ages.append((f"{{{env}}}", max(0.0, age)))
        changes.append((f"{{{env}}}", state.changes))
        if state.store is not None:
            redis_up.append((f"{{{env}}}", 1 if state.store.available else 0))
            redis_counts.extend(
                (f'{{{env},event="{event}"}}', state.store.counts[event])
                for event in ("populate", "write", "lost", "error")
            )
    metric("connection_state", "gauge", "1 for each environment's current state.", states)
    metric("data_age_seconds", "gauge", "Seconds since the data was last known current.", ages)
    metric("changes_total", "counter", "Item changes applied from upstream or files.", changes)
    if redis_up:
        metric("redis_available", "gauge", "1 while the Redis store answers.", redis_up)
        metric("redis_total", "counter", "Redis store events by kind.", redis_counts)
    if spool is not None and forwarder is not None:
        metric(
            "events_spooled", "gauge", "Event payloads waiting on disk.", [("", len(spool.pending))]
        )
        metric("events_spooled_bytes", "gauge", "Bytes of waiting payloads.", [("", spool.bytes)])
        metric(
            "events_total",
            "counter",
            "Event payloads by outcome.",
            [
                ('{outcome="accepted"}', event_counts["accepted"]),
                ('{outcome="forwarded"}', forwarder.counts["forwarded"]),
                ('{outcome="rejected"}', spool.rejected),
                ('{outcome="retry"}', forwarder.counts["retry"]),
                ('{outcome="over_budget"}', event_counts["over_budget"]),
            ],
        )
    else:
        metric(
            "events_total",
            "counter",
            "Event payloads by outcome (forwarding is off: discarded).",
            [('{outcome="discarded"}', event_counts["discarded"])],
        )
    return exposition.encode()
