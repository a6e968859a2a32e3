"""The event processor end to end against a recording transport: which events an evaluation,
custom event or identify produces, their shapes, sampling, and the never-blocking queue."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime
from email.utils import format_datetime

from event_support import EVENTS_URI, Recorder, evaluate, flag_data, flag_json, processor
from flagstaff_core import Context
from flagstaff_sdk.clock import ManualClock
from flagstaff_sdk.events import DropReason

USER = Context(kind="user", key="u1", name="Ann", attributes={"email": "a@x"})


def test_every_evaluation_is_summarised_but_only_tracked_flags_get_feature_events() -> None:
    recorder = Recorder()
    data = flag_data(flag_json("plain"), flag_json("tracked", trackEvents=True, version=7))
    with processor(recorder) as sink:
        for _ in range(3):
            evaluate(sink, data, "plain", USER, False)
        evaluate(sink, data, "tracked", USER, False)
        evaluate(sink, data, "missing", USER, "dflt")
        assert sink.sync(5)
    features = recorder.of_kind("feature")
    assert len(features) == 1
    feature = features[0]
    assert {k: v for k, v in feature.items() if k != "creationDate"} == {
        "kind": "feature",
        "key": "tracked",
        "value": True,
        "default": False,
        "version": 7,
        "variation": 0,
        "context": {"key": "u1", "kind": "user", "name": "Ann", "email": "a@x"},
    }
    (summary,) = recorder.of_kind("summary")
    assert summary["features"]["plain"]["counters"] == [
        {"count": 3, "value": True, "variation": 0, "version": 1}
    ]
    assert summary["features"]["missing"] == {
        "default": "dflt",
        "contextKinds": ["user"],
        "counters": [{"count": 1, "value": "dflt", "unknown": True}],
    }
    assert len(recorder.of_kind("index")) == 1


def test_experiments_force_the_reason_and_variation_detail_adds_it() -> None:
    recorder = Recorder()
    data = flag_data(
        flag_json("exp", trackEventsFallthrough=True),
        flag_json("tracked", trackEvents=True),
    )
    with processor(recorder) as sink:
        evaluate(sink, data, "exp", USER, False)
        evaluate(sink, data, "tracked", USER, False)
        evaluate(sink, data, "tracked", USER, False, with_reason=True)
        assert sink.sync(5)
    exp, tracked, detailed = recorder.of_kind("feature")
    assert exp["key"] == "exp"
    assert exp["reason"] == {"kind": "FALLTHROUGH"}
    assert "reason" not in tracked
    assert detailed["reason"] == {"kind": "FALLTHROUGH"}


def test_prerequisites_are_counted_and_tracked_with_prereq_of() -> None:
    recorder = Recorder()
    data = flag_data(
        flag_json("parent", prerequisites=[{"key": "child", "variation": 0}], trackEvents=True),
        flag_json("child", trackEvents=True, version=4),
    )
    with processor(recorder) as sink:
        evaluate(sink, data, "parent", USER, False)
        assert sink.sync(5)
    child, parent = recorder.of_kind("feature")
    assert child["key"] == "child"
    assert child["prereqOf"] == "parent"
    assert child["default"] is None
    assert child["version"] == 4
    assert parent["key"] == "parent"
    assert "prereqOf" not in parent
    (summary,) = recorder.of_kind("summary")
    assert set(summary["features"]) == {"parent", "child"}
    assert summary["features"]["child"]["default"] is None


def test_flags_excluded_from_summaries_are_not_counted() -> None:
    recorder = Recorder()
    data = flag_data(flag_json("hidden", excludeFromSummaries=True), flag_json("shown"))
    with processor(recorder) as sink:
        evaluate(sink, data, "hidden", USER, False)
        evaluate(sink, data, "shown", USER, False)
        assert sink.sync(5)
    (summary,) = recorder.of_kind("summary")
    assert set(summary["features"]) == {"shown"}


def test_debug_events_until_the_later_of_now_and_the_servers_clock() -> None:
    clock = ManualClock()
    now_ms = int(clock.wall() * 1000)
    server_ahead = datetime.fromtimestamp(clock.wall() + 3600, UTC)
    recorder = Recorder(date=format_datetime(server_ahead, usegmt=True))
    data = flag_data(
        flag_json("soon", debugEventsUntilDate=now_ms + 60_000),
        flag_json("later", debugEventsUntilDate=now_ms + 7_200_000),
        flag_json("past", debugEventsUntilDate=now_ms - 1),
    )
    with processor(recorder, clock=clock) as sink:
        for key in ("soon", "later", "past"):
            evaluate(sink, data, key, USER, False)
        assert sink.sync(5)
        # the service's Date header is an hour ahead now: "soon" is over by its clock
        for key in ("soon", "later", "past"):
            evaluate(sink, data, key, USER, False)
        assert sink.sync(5)
    debug = [e["key"] for e in recorder.of_kind("debug")]
    assert debug == ["soon", "later", "later"]
    assert recorder.of_kind("feature") == []


def test_debug_events_keep_anonymous_contexts_whole_but_feature_events_redact_them() -> None:
    recorder = Recorder()
    clock = ManualClock()
    until = int(clock.wall() * 1000) + 60_000
    anonymous = Context(kind="user", key="anon", anonymous=True, attributes={"plan": "free"})
    data = flag_data(flag_json("f", trackEvents=True, debugEventsUntilDate=until))
    with processor(recorder, clock=clock) as sink:
        evaluate(sink, data, "f", anonymous, False)
        assert sink.sync(5)
    (feature,) = recorder.of_kind("feature")
    (debug,) = recorder.of_kind("debug")
    (index,) = recorder.of_kind("index")
    assert feature["context"] == {
        "key": "anon",
        "kind": "user",
        "anonymous": True,
        "_meta": {"redactedAttributes": ["plan"]},
    }
    assert debug["context"]["plan"] == "free"
    assert index["context"]["plan"] == "free"


def test_sampling_keeps_about_one_in_n_as_the_injected_random_decides() -> None:
    recorder = Recorder()
    data = flag_data(flag_json("s", trackEvents=True, samplingRatio=4))
    draws = random.Random(42)
    with processor(recorder, random=random.Random(42).random) as sink:
        for _ in range(200):
            evaluate(sink, data, "s", USER, False)
        assert sink.sync(5)
        stats = sink.stats()
    expected = sum(draws.random() < 0.25 for _ in range(200))
    features = recorder.of_kind("feature")
    assert len(features) == expected
    assert 0 < expected < 200
    assert all(e["samplingRatio"] == 4 for e in features)
    assert stats.sampled_out == 200 - expected
    # the summary still counts every evaluation
    (summary,) = recorder.of_kind("summary")
    assert summary["features"]["s"]["counters"][0]["count"] == 200


def test_sampling_ratio_zero_sends_no_feature_events() -> None:
    recorder = Recorder()
    data = flag_data(flag_json("z", trackEvents=True, samplingRatio=0))
    with processor(recorder) as sink:
        evaluate(sink, data, "z", USER, False)
        assert sink.sync(5)
    assert recorder.of_kind("feature") == []


def test_index_events_once_per_context_until_the_key_cache_is_reset() -> None:
    recorder = Recorder()
    clock = ManualClock()
    data = flag_data(flag_json("f"))
    other = Context.multi(Context.create("u2"), Context.create("o1", "org"))
    with processor(recorder, clock=clock, context_keys_flush_interval=60.0) as sink:
        evaluate(sink, data, "f", USER, False)
        evaluate(sink, data, "f", USER, False)
        sink.record_custom("click", USER, None, None)
        evaluate(sink, data, "f", other, False)
        assert sink.sync(5)
        clock.advance(61.0)
        assert sink.sync(5)  # the actor's timer runs on the injected clock
        evaluate(sink, data, "f", USER, False)
        assert sink.sync(5)
    indexed = [e["context"].get("key", e["context"].get("kind")) for e in recorder.of_kind("index")]
    assert indexed == ["u1", "multi", "u1"]
    assert sink.stats().deduplicated_contexts == 2


def test_custom_and_identify_events_carry_their_fields() -> None:
    recorder = Recorder()
    with processor(recorder, private_attributes=("email",)) as sink:
        sink.record_identify(USER)
        sink.record_custom("purchase", USER, {"sku": "x"}, 9.5)
        sink.record_custom("view", USER, None, None)
        assert sink.sync(5)
    identify, purchase, view = recorder.events()
    redacted = {
        "key": "u1",
        "kind": "user",
        "name": "Ann",
        "_meta": {"redactedAttributes": ["email"]},
    }
    assert identify["kind"] == "identify"
    assert identify["context"] == redacted
    assert purchase == {
        "kind": "custom",
        "creationDate": purchase["creationDate"],
        "key": "purchase",
        "context": redacted,
        "data": {"sku": "x"},
        "metricValue": 9.5,
    }
    assert "data" not in view
    assert "metricValue" not in view
    # identify put the context in the index: no index event for the custom events
    assert recorder.of_kind("index") == []


def test_omit_anonymous_contexts_skips_them_in_index_and_identify_events() -> None:
    recorder = Recorder()
    anonymous = Context(kind="user", key="anon", anonymous=True)
    org = Context.create("o1", "org")
    data = flag_data(flag_json("f"))
    with processor(recorder, omit_anonymous_contexts=True) as sink:
        sink.record_identify(anonymous)
        sink.record_identify(Context.multi(anonymous, org))
        evaluate(sink, data, "f", Context(kind="device", key="anon2", anonymous=True), False)
        sink.record_custom("c", anonymous, None, None)
        assert sink.sync(5)
    identifies = recorder.of_kind("identify")
    assert [e["context"] for e in identifies] == [{"key": "o1", "kind": "org"}]
    assert recorder.of_kind("index") == []
    assert len(recorder.of_kind("custom")) == 1


def test_creation_dates_come_from_the_injected_clock() -> None:
    recorder = Recorder()
    clock = ManualClock(now=500.0, wall_offset=1_000_000.0)
    with processor(recorder, clock=clock) as sink:
        sink.record_custom("a", USER, None, None)
        clock.advance(2.5)
        sink.record_custom("b", USER, None, None)
        assert sink.sync(5)
    a, b = recorder.of_kind("custom")
    assert a["creationDate"] == 1_000_500_000
    assert b["creationDate"] == 1_000_502_500


def test_requests_carry_the_event_schema_and_the_sdk_key() -> None:
    recorder = Recorder()
    with processor(recorder, compress=True) as sink:
        sink.record_custom("a", USER, None, None)
        assert sink.sync(5)
    (request,) = recorder.bulk()
    assert request.headers["x-launchdarkly-event-schema"] == "4"
    assert request.headers["authorization"] == "sdk-key-123456"
    assert request.headers["content-encoding"] == "gzip"
    assert request.headers["content-type"] == "application/json"
    assert len(request.headers["x-launchdarkly-payload-id"]) == 36


def test_a_full_queue_drops_and_counts_without_blocking_the_caller() -> None:
    """The actor is held inside a sampling draw; the caller keeps recording at full speed."""
    recorder = Recorder()
    entered, release = threading.Event(), threading.Event()

    def blocking_random() -> float:
        entered.set()
        release.wait(10)
        return 0.0

    data = flag_data(flag_json("s", trackEvents=True, samplingRatio=2), flag_json("f"))
    with processor(recorder, queue_capacity=50, random=blocking_random) as sink:
        evaluate(sink, data, "s", USER, False)
        assert entered.wait(5)
        for _ in range(50 + 30):
            evaluate(sink, data, "f", USER, False)
        stats = sink.stats()
        release.set()
        assert sink.sync(5)
    assert stats.dropped[DropReason.QUEUE_FULL] == 30
    (summary,) = recorder.of_kind("summary")
    assert summary["features"]["f"]["counters"][0]["count"] == 50


def test_the_event_buffer_beyond_capacity_drops_and_counts() -> None:
    recorder = Recorder()
    with processor(recorder, capacity=5) as sink:
        for n in range(4):
            sink.record_custom(f"e{n}", Context.create(f"u{n}"), None, None)
        assert sink.sync(5)
        stats = sink.stats()
    # 4 index + 4 custom events compete for 5 places
    assert len(recorder.events()) == 5
    assert stats.dropped[DropReason.CAPACITY] == 3


def test_events_recorded_after_close_are_counted_as_closed() -> None:
    recorder = Recorder()
    with processor(recorder) as sink:
        sink.record_custom("before", USER, None, None)
    sink.record_custom("after", USER, None, None)
    sink.record_identify(USER)
    assert [e["key"] for e in recorder.of_kind("custom")] == ["before"]
    assert sink.stats().dropped[DropReason.CLOSED] == 2


def test_diagnostic_init_once_and_periodic_diagnostics_with_drop_counts() -> None:
    recorder = Recorder()
    clock = ManualClock()
    with processor(
        recorder, clock=clock, diagnostic_opt_out=False, diagnostic_interval=60.0, capacity=1
    ) as sink:
        sink.record_custom("a", Context.create("x"), None, None)  # index + custom: one dropped
        assert sink.sync(5)
        assert [r.body["kind"] for r in recorder.diagnostics()] == ["diagnostic-init"]
        # the first periodic event goes as soon as the first stream attempt has ended
        sink.record_stream_init(123, 45, False)
        assert sink.sync(5)
        clock.advance(61.0)
        assert sink.sync(5)
        assert sink.sync(5)
    kinds = [r.body["kind"] for r in recorder.diagnostics()]
    assert kinds == ["diagnostic-init", "diagnostic", "diagnostic", "diagnostic"]
    init, first, periodic, last = (r.body for r in recorder.diagnostics())
    assert init["id"]["sdkKeySuffix"] == "123456"
    assert init["configuration"]["eventsCapacity"] == 1
    assert first["id"] == periodic["id"] == last["id"] == init["id"]
    assert first["droppedEvents"] == 1
    assert first["droppedEventsByReason"] == {"capacity": 1}
    assert first["eventsInLastBatch"] == 1
    assert first["streamInits"] == [{"timestamp": 123, "durationMillis": 45, "failed": False}]
    assert (periodic["droppedEvents"], periodic["streamInits"]) == (0, [])
    assert "closing" not in first
    assert "closing" not in periodic
    # closing: one last report, so the fleet view sees the instance stop at once
    assert last["closing"] is True
    assert "x-launchdarkly-payload-id" not in recorder.diagnostics()[0].headers
    assert all(
        r.headers.get("host") == EVENTS_URI.removeprefix("http://") for r in recorder.requests
    )


def test_concurrent_callers_lose_nothing_below_the_queue_bound() -> None:
    recorder = Recorder()
    data = flag_data(flag_json("f"), flag_json("g", variations=["x", "y"], offVariation=0))
    contexts = [Context.create(f"user-{n}") for n in range(8)]

    def hammer(offset: int) -> None:
        for n in range(3000):
            evaluate(sink, data, "f" if n % 2 else "g", contexts[(n + offset) % 8], None)

    with processor(recorder, drain_interval=0.005) as sink:
        threads = [threading.Thread(target=hammer, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sink.sync(10)
        stats = sink.stats()
    counts = {
        key: sum(
            c["count"] for s in recorder.of_kind("summary") for c in s["features"][key]["counters"]
        )
        for key in ("f", "g")
    }
    assert counts == {"f": 6000, "g": 6000}
    assert stats.dropped_total == 0
    indexed = [e["context"]["key"] for e in recorder.of_kind("index")]
    assert sorted(indexed) == sorted(c.key for c in contexts)


def test_feature_and_debug_events_beyond_capacity_are_counted_not_built() -> None:
    recorder = Recorder()
    clock = ManualClock()
    until = int(clock.wall() * 1000) + 60_000
    data = flag_data(flag_json("f", trackEvents=True, debugEventsUntilDate=until))
    with processor(recorder, clock=clock, capacity=4) as sink:
        for _ in range(6):
            evaluate(sink, data, "f", USER, False)
        assert sink.sync(5)
        stats = sink.stats()
    assert [e["kind"] for e in recorder.events()] == [
        "index",
        "feature",
        "debug",
        "feature",
        "summary",
    ]
    assert stats.dropped[DropReason.CAPACITY] == 9
    (summary,) = recorder.of_kind("summary")
    assert summary["features"]["f"]["counters"][0]["count"] == 6
