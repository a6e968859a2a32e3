"""With the event endpoint down for a while (503, lost acknowledgements, connection refused) and
then back, every custom event and every evaluation count reaches a de-duplicating sink exactly
once: the client's public API over real loopback HTTP."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flagstaff_sdk import Client, Config, Context, TestData, Timing
from flagstaff_sdk.events import EventOptions, sink_factory
from sink_server import EventSinkServer, Mode
from support.deadlines import wait_until

SETTLE_SECONDS = 20.0
"""How long retries and the spool get to fail, then to deliver everything."""


@pytest.fixture
def sink() -> Iterator[EventSinkServer]:
    server = EventSinkServer()
    yield server
    server.close()


class Harness:
    """A client whose event processor is reachable, and the totals it was asked to record."""

    def __init__(self, sink: EventSinkServer, spool_dir: Path | None) -> None:
        self.td = TestData()
        self.td.update(self.td.flag("f").variation_for_user("user-1", False))
        self.td.update(self.td.flag("g").variations("a", "b", "c").fallthrough_variation(2))
        self.factory = sink_factory(
            EventOptions(
                flush_interval=0.05,
                retry_delays=(0.02, 0.02),
                spool_retry_interval=0.05,
                spool_retry_max=0.2,
                drain_interval=0.01,
                close_timeout=5.0,
                spool_dir=spool_dir,
                diagnostic_opt_out=True,
            )
        )
        self.client = Client(
            Config(
                sdk_key="sdk-exactly-once",
                base_uri=sink.url,
                data_source=self.td,
                event_sink=self.factory,
                timing=Timing(connect_timeout=0.5, read_timeout=1.0),
            )
        )
        assert self.factory.processor is not None
        self.events = self.factory.processor
        self.customs: list[str] = []
        self.evaluations: Counter[tuple[str, Any]] = Counter()

    def burst(self, tag: str, count: int) -> None:
        for n in range(count):
            context = Context.create(f"user-{n % 5}")
            for key, default in (("f", False), ("g", "z"), ("nope", 7)):
                value = self.client.variation(key, context, default)
                self.evaluations[(key, value)] += 1
            name = f"{tag}-{n}"
            self.client.track(name, context, {"n": n}, float(n))
            self.customs.append(name)


def _received(sink: EventSinkServer) -> tuple[Counter[str], Counter[tuple[str, Any]]]:
    customs: Counter[str] = Counter()
    evaluations: Counter[tuple[str, Any]] = Counter()
    for event in sink.events():
        if event["kind"] == "custom":
            customs[event["key"]] += 1
        elif event["kind"] == "summary":
            for key, feature in event["features"].items():
                for counter in feature["counters"]:
                    evaluations[(key, counter["value"])] += counter["count"]
    return customs, evaluations


def _outage(harness: Harness, sink: EventSinkServer, mode: Mode, tag: str) -> None:
    failed_before = harness.events.stats().failed_attempts
    sink.set_mode(mode)
    harness.burst(tag, 40)
    wait_until(
        lambda: harness.events.stats().failed_attempts >= failed_before + 3,
        timeout=SETTLE_SECONDS,
        what=f"delivery failing while the sink is {mode}",
    )
    harness.burst(f"{tag}-more", 40)
    harness.client.flush()


@pytest.mark.parametrize("spool", ["memory", "disk"])
def test_every_event_and_evaluation_arrives_exactly_once_across_outages(
    sink: EventSinkServer, tmp_path: Path, spool: str
) -> None:
    harness = Harness(sink, tmp_path / "spool" if spool == "disk" else None)
    try:
        harness.burst("up", 50)
        _outage(harness, sink, "503", "down503")
        # a flag change mid-outage: counters are per version, totals per value still add up
        harness.td.update(harness.td.flag("g").fallthrough_variation(0))
        _outage(harness, sink, "ack_lost", "acklost")
        _outage(harness, sink, "refused", "refused")
        sink.set_mode("up")
        harness.burst("back", 50)
        harness.client.flush()
        wait_until(
            lambda: (
                harness.events.stats().spooled_payloads == 0
                and _received(sink)[0].total() == len(harness.customs)
            ),
            timeout=SETTLE_SECONDS,
            what="everything delivered after the sink came back",
        )
    finally:
        harness.client.close()
    customs, evaluations = _received(sink)
    assert customs == Counter(harness.customs)
    assert max(customs.values()) == 1
    assert evaluations == harness.evaluations
    stats = harness.factory.stats()
    assert stats is not None
    assert stats.dropped_total == 0
    assert sink.rejected > 0  # the 503 phase was seen
    assert sink.duplicates > 0  # lost acknowledgements made the SDK resend known payloads
    assert stats.delivered_payloads == len(sink.payloads)
