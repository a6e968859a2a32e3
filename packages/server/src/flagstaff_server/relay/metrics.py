"""Prometheus text for the relay's own gauges and counters (upstream connection state, data age,
Redis store, event spool), appended to delivery's metrics on `/metrics`. Reads; changes nothing.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from flagstaff_sdk.status import DataSourceState

from flagstaff_server.delivery.prometheus import Exposition, label_value

if TYPE_CHECKING:
    from flagstaff_server.relay.edge import Relay

PREFIX = "flagstaff_relay_"


def render(relay: Relay) -> bytes:
    exposition = Exposition(PREFIX)
    metric = exposition.metric

    now = time.monotonic()
    states: list[tuple[str, float]] = []
    ages: list[tuple[str, float]] = []
    changes: list[tuple[str, float]] = []
    redis_up: list[tuple[str, float]] = []
    redis_counts: list[tuple[str, float]] = []
    for name, state in relay.environments.items():
        env = f'environment="{label_value(name)}"'
        current, _since = relay.connection_state(state)
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
    spool, forwarder = relay.spool, relay.forwarder
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
                ('{outcome="accepted"}', relay.events.counts["accepted"]),
                ('{outcome="forwarded"}', forwarder.counts["forwarded"]),
                ('{outcome="rejected"}', spool.rejected),
                ('{outcome="retry"}', forwarder.counts["retry"]),
                ('{outcome="over_budget"}', relay.events.counts["over_budget"]),
            ],
        )
    else:
        metric(
            "events_total",
            "counter",
            "Event payloads by outcome (forwarding is off: discarded).",
            [('{outcome="discarded"}', relay.events.counts["discarded"])],
        )
    return exposition.encode()
