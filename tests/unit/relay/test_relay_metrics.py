"""The relay's own `/metrics` families, rendered from what the relay hands in."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from flagstaff_sdk.status import DataSourceState
from flagstaff_server.relay.config import EventsConfig
from flagstaff_server.relay.forwarder import EventForwarder
from flagstaff_server.relay.metrics import EnvironmentReading, render
from flagstaff_server.relay.spool import EventSpool


def _samples(text: bytes) -> dict[str, float]:
    lines = text.decode().splitlines()
    return {
        name: float(value)
        for name, value in (line.rsplit(" ", 1) for line in lines if not line.startswith("#"))
    }


def test_each_environment_shows_its_state_data_age_and_changes() -> None:
    now = time.monotonic()
    readings = [
        EnvironmentReading(
            name="production",
            state=DataSourceState.VALID,
            data_confirmed=now - 100,
            changes=7,
            store=None,
        ),
        EnvironmentReading(
            name='odd "name"',
            state=DataSourceState.INTERRUPTED,
            data_confirmed=now - 30,
            changes=0,
            store=None,
        ),
        EnvironmentReading(
            name="new",
            state=DataSourceState.INITIALIZING,
            data_confirmed=None,
            changes=0,
            store=None,
        ),
    ]
    samples = _samples(
        render(readings, spool=None, forwarder=None, event_counts=Counter(discarded=3))
    )
    production = 'environment="production"'
    odd = 'environment="odd \\"name\\""'
    assert samples[f'flagstaff_relay_connection_state{{{production},state="VALID"}}'] == 1
    assert samples[f'flagstaff_relay_connection_state{{{production},state="OFF"}}'] == 0
    assert samples[f'flagstaff_relay_connection_state{{{odd},state="INTERRUPTED"}}'] == 1
    # current data has no age; data not confirmed since going interrupted ages from then
    assert samples[f"flagstaff_relay_data_age_seconds{{{production}}}"] == 0
    assert samples[f"flagstaff_relay_data_age_seconds{{{odd}}}"] >= 30
    assert not any("data_age" in name and '"new"' in name for name in samples)
    assert samples[f"flagstaff_relay_changes_total{{{production}}}"] == 7
    assert samples['flagstaff_relay_events_total{outcome="discarded"}'] == 3
    assert not any("redis" in name for name in samples)


def test_forwarded_events_show_the_spool_and_each_outcome(tmp_path: Path) -> None:
    spool = EventSpool(tmp_path / "events")
    try:
        spool.recover()
        spool.pending.update({1: 100, 2: 50})
        spool.bytes = 150
        spool.rejected = 1
        forwarder = EventForwarder(spool, EventsConfig(), ("http://127.0.0.1:9",), {})
        forwarder.counts.update(forwarded=5, retry=2)
        samples = _samples(
            render(
                [],
                spool=spool,
                forwarder=forwarder,
                event_counts=Counter(accepted=8, over_budget=4),
            )
        )
    finally:
        spool.close()
    assert samples["flagstaff_relay_events_spooled"] == 2
    assert samples["flagstaff_relay_events_spooled_bytes"] == 150
    assert {
        outcome: samples[f'flagstaff_relay_events_total{{outcome="{outcome}"}}']
        for outcome in ("accepted", "forwarded", "rejected", "retry", "over_budget")
    } == {"accepted": 8, "forwarded": 5, "rejected": 1, "retry": 2, "over_budget": 4}
