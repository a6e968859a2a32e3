"""Events across regions: payloads go to the first healthy endpoint's events URI, fail over after
`failover_after_failures` consecutive failures keeping their payload id, and come back to the
preferred endpoint once a probe (the next batch, offered every `probe_interval`) is accepted
there, as the stream does with its regions."""

from __future__ import annotations

from event_support import Recorder, processor
from flagstaff_core import Context
from flagstaff_sdk import Endpoint, Timing
from flagstaff_sdk.clock import ManualClock
from flagstaff_sdk.events import EventProcessor
from support.deadlines import wait_until

USER = Context.create("u1")
REGIONS = (
    Endpoint.at("http://events.region-a.test", name="a"),
    Endpoint.at("http://events.region-b.test", name="b"),
)
A, B = "events.region-a.test", "events.region-b.test"
TIMING = Timing(failover_after_failures=2, probe_interval=60.0)


def send(sink: EventProcessor, key: str) -> None:
    sink.record_custom(key, USER, None, None)
    assert sink.sync(5)


def hosts(recorder: Recorder, start: int = 0) -> list[str]:
    return [r.host for r in recorder.bulk()[start:]]


def test_events_go_to_the_preferred_endpoint_while_it_is_healthy() -> None:
    recorder = Recorder()
    with processor(recorder, endpoints=REGIONS, timing=TIMING) as sink:
        send(sink, "one")
        send(sink, "two")
        assert sink.stats().endpoint == "a"
    assert hosts(recorder) == [A, A]


def test_a_batch_fails_over_after_two_failures_with_its_payload_id_and_later_ones_follow() -> None:
    recorder = Recorder()
    recorder.down = {A}
    with processor(recorder, endpoints=REGIONS, timing=TIMING) as sink:
        send(sink, "first")
        send(sink, "second")
        stats = sink.stats()
    bulk = recorder.bulk()
    assert hosts(recorder) == [A, A, B, B]
    assert len({r.headers["x-launchdarkly-payload-id"] for r in bulk[:3]}) == 1
    assert (
        bulk[3].headers["x-launchdarkly-payload-id"] != bulk[0].headers["x-launchdarkly-payload-id"]
    )
    assert [e["key"] for e in recorder.of_kind("custom")] == ["first", "second"]
    assert (stats.endpoint, stats.failed_attempts, stats.delivered_payloads) == ("b", 2, 2)


def test_events_return_to_the_preferred_endpoint_once_a_probe_is_accepted_there() -> None:
    clock = ManualClock()
    recorder = Recorder()
    recorder.down = {A}
    with processor(recorder, clock=clock, endpoints=REGIONS, timing=TIMING) as sink:
        send(sink, "during")  # A, A, then B
        recorder.down = set()  # region A is back
        send(sink, "before-the-probe")  # not due yet: stays with B
        clock.advance(60.0)
        send(sink, "probe")  # offered to A first, accepted there
        send(sink, "after")
        assert sink.stats().endpoint == "a"
    assert hosts(recorder) == [A, A, B, B, A, A]
    assert [e["key"] for e in recorder.of_kind("custom")] == [
        "during",
        "before-the-probe",
        "probe",
        "after",
    ]


def test_a_refused_probe_costs_one_attempt_and_the_batch_still_goes_to_the_fallback() -> None:
    clock = ManualClock()
    recorder = Recorder()
    recorder.down = {A}
    with processor(recorder, clock=clock, endpoints=REGIONS, timing=TIMING) as sink:
        send(sink, "during")
        clock.advance(60.0)
        send(sink, "probe")  # A still down: one attempt there, then B at once
        clock.advance(30.0)
        send(sink, "between")  # the next probe is a whole interval later
        clock.advance(30.0)
        recorder.down = set()
        send(sink, "back")
        stats = sink.stats()
    assert hosts(recorder) == [A, A, B, A, B, B, A]
    assert stats.dropped_total == 0
    assert stats.delivered_payloads == 4
    assert stats.endpoint == "a"


def test_with_every_endpoint_down_each_is_tried_in_turn_and_the_first_back_gets_the_spool() -> None:
    recorder = Recorder()
    recorder.down = {A, B}
    with processor(
        recorder,
        endpoints=REGIONS,
        timing=TIMING,
        retry_delays=(0.01,),
        spool_retry_interval=0.02,
        spool_retry_max=0.02,
    ) as sink:
        send(sink, "kept")
        wait_until(lambda: {A, B} <= set(hosts(recorder, 4)), what="both tried again in turn")
        recorder.down = {A}
        wait_until(lambda: sink.stats().spooled_payloads == 0, what="the spool delivered to B")
        stats = sink.stats()
    assert stats.endpoint == "b"
    bulk = recorder.bulk()
    assert len({r.headers["x-launchdarkly-payload-id"] for r in bulk}) == 1
    assert [e["key"] for e in recorder.of_kind("custom")] == ["kept"]
