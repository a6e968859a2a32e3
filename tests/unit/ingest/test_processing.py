"""Processing math and idempotence: summary counters to hourly counts per variation, contexts
from single and multi-kind events, diagnostics to an instance report, and a batch committed twice
(or a payload id seen again) adding nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.payload_values import HOUR_MS
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.tally import NO_VARIATION, tally

HOUR = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS


def record(seq: int, events: Any, *, payload_id: str = "", kind: Kind = Kind.ANALYTICS) -> Record:
    return Record(
        seq=seq,
        received_ms=HOUR + 5,
        kind=kind,
        project="shop",
        environment="production",
        payload_id=payload_id or f"id-{seq}",
        payload=orjson.dumps(events),
    )


def summary(end: int, counters: list[dict[str, Any]], flag: str = "f") -> dict[str, Any]:
    return {
        "kind": "summary",
        "startDate": end - 10,
        "endDate": end,
        "features": {flag: {"default": False, "counters": counters}},
    }


def test_summary_counters_add_up_per_flag_hour_and_variation() -> None:
    batch = tally(
        [
            record(
                1,
                [summary(HOUR + 10, [{"variation": 0, "count": 3}, {"variation": 1, "count": 2}])],
            ),
            record(2, [summary(HOUR + 20, [{"variation": 0, "version": 2, "count": 4}])]),
            record(3, [summary(HOUR + HOUR_MS, [{"variation": 1, "count": 7}])]),
            record(4, [summary(HOUR, [{"unknown": True, "value": "d", "count": 5}], flag="gone")]),
        ]
    )
    key = ("shop", "production")
    assert batch.counts == {
        (*key, "f", HOUR, 0): 7,
        (*key, "f", HOUR, 1): 2,
        (*key, "f", HOUR + HOUR_MS, 1): 7,
        (*key, "gone", HOUR, NO_VARIATION): 5,
    }
    assert batch.activity[(*key, "f")] == (HOUR, HOUR + HOUR_MS)


def test_bad_events_inside_a_payload_are_skipped_not_fatal() -> None:
    batch = tally(
        [
            record(
                1,
                [
                    5,
                    {"kind": "summary", "features": "nope"},
                    summary(
                        HOUR, [{"variation": 0, "count": -3}, "x", {"variation": 0, "count": 2}]
                    ),
                ],
            )
        ]
    )
    assert batch.skipped == 2
    assert batch.counts == {("shop", "production", "f", HOUR, 0): 2}


def test_contexts_from_single_multi_and_context_keys_and_custom_metrics() -> None:
    multi = {"kind": "multi", "user": {"key": "u1", "name": "A"}, "org": {"key": "o1"}}
    batch = tally(
        [
            record(
                1,
                [
                    {
                        "kind": "index",
                        "creationDate": HOUR,
                        "context": {"kind": "user", "key": "u2"},
                    },
                    {
                        "kind": "custom",
                        "creationDate": HOUR + 1,
                        "key": "buy",
                        "context": multi,
                        "metricValue": 2.5,
                    },
                    {
                        "kind": "custom",
                        "creationDate": HOUR + 2,
                        "key": "buy",
                        "contextKeys": {"device": "d1"},
                    },
                ],
            )
        ]
    )
    assert set(batch.contexts) == {
        ("shop", "production", kind, key)
        for kind, key in (("user", "u2"), ("user", "u1"), ("org", "o1"), ("device", "d1"))
    }
    assert batch.contexts[("shop", "production", "user", "u1")][1] == {
        "kind": "user",
        "key": "u1",
        "name": "A",
    }
    assert [(c.key, c.metric_value, c.context_key) for c in batch.customs] == [
        ("buy", 2.5, "u1"),
        ("buy", None, "d1"),
    ]
    assert (batch.bodies[0].first_ms, batch.bodies[0].last_ms) == (HOUR, HOUR + 5)


def test_a_context_keeps_its_newest_attributes_and_a_kindless_one_is_a_user() -> None:
    def index(at: int, **context: Any) -> dict[str, Any]:
        return {"kind": "index", "creationDate": at, "context": context}

    batch = tally(
        [
            record(
                1,
                [
                    index(HOUR + 5, kind="user", key="u1", plan="gold"),
                    index(HOUR + 1, kind="user", key="u1", plan="silver"),  # older: not kept
                    index(HOUR + 2, key="legacy", name="L"),
                ],
            )
        ]
    )
    assert batch.contexts[("shop", "production", "user", "u1")] == (
        HOUR + 5,
        {"kind": "user", "key": "u1", "plan": "gold"},
    )
    assert batch.contexts[("shop", "production", "user", "legacy")] == (
        HOUR + 2,
        {"kind": "user", "key": "legacy", "name": "L"},
    )


def test_diagnostics_report_sdk_stream_state_and_dropped_events() -> None:
    ident = {"diagnosticId": "i1", "sdkKeySuffix": "abcdef"}
    init = {
        "kind": "diagnostic-init",
        "id": ident,
        "creationDate": HOUR,
        "sdk": {"name": "python-server-sdk", "version": "9.18.4"},
        "configuration": {"streamingDisabled": False},
    }
    periodic = {
        "kind": "diagnostic",
        "id": ident,
        "creationDate": HOUR + 100,
        "droppedEvents": 3,
        "dataSinceDate": HOUR,
        "streamInits": [
            {"timestamp": HOUR + 10, "durationMillis": 5, "failed": False},
            {"timestamp": HOUR + 50, "durationMillis": 5, "failed": True},
        ],
    }
    batch = tally(
        [record(1, init, kind=Kind.DIAGNOSTIC), record(2, periodic, kind=Kind.DIAGNOSTIC)]
    )
    report = batch.instances[("shop", "production", "i1")]
    assert (report.sdk_name, report.sdk_version, report.streaming) == (
        "python-server-sdk",
        "9.18.4",
        True,
    )
    assert (report.dropped_events, report.stream.ok, report.stream.ok_ms) == (3, False, HOUR + 10)
    assert report.last_ms == HOUR + 100


def test_an_instances_stream_state_interval_and_reports_build_up_across_batches(
    tmp_path: Path,
) -> None:
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'a.db'}")
    ident = {"diagnosticId": "i1", "sdkKeySuffix": "abcdef"}
    init = {
        "kind": "diagnostic-init",
        "id": ident,
        "creationDate": HOUR,
        "configuration": {"streamingDisabled": False, "diagnosticRecordingIntervalMillis": 60_000},
    }

    def periodic(at: int, inits: list[tuple[int, bool]], **extra: Any) -> dict[str, Any]:
        attempts = [{"timestamp": t, "durationMillis": 3, "failed": not ok} for t, ok in inits]
        return {
            "kind": "diagnostic",
            "id": ident,
            "creationDate": at,
            "streamInits": attempts,
            **extra,
        }

    batches = [
        [init, periodic(HOUR + 60_000, [(HOUR + 10, True)])],
        [periodic(HOUR + 120_000, [(HOUR + 90_000, False), (HOUR + 100_000, False)])],
        [periodic(HOUR + 180_000, [(HOUR + 150_000, False)])],
    ]
    for seq, events in enumerate(batches, start=1):
        records = [record(seq * 10 + n, e, kind=Kind.DIAGNOSTIC) for n, e in enumerate(events)]
        store.commit("node", records, now_ms=HOUR)
    (row,) = store.sdk_instances("shop", "production")
    assert row["diagnostic_interval_ms"] == 60_000
    assert (row["stream_ok"], row["stream_ok_ms"], row["stream_failed_ms"]) == (
        False,
        HOUR + 10,
        HOUR + 90_000,
    )
    assert (row["first_ms"], row["last_ms"], row["reported_state"]) == (HOUR, HOUR + 180_000, None)

    source = {"state": "INTERRUPTED", "stateSince": HOUR, "dataAgeMillis": 5_000, "source": "stale"}
    closing = periodic(HOUR + 200_000, [(HOUR + 190_000, True)], dataSource=source, closing=True)
    store.commit("node", [record(90, closing, kind=Kind.DIAGNOSTIC)], now_ms=HOUR)
    (row,) = store.sdk_instances("shop", "production")
    assert (row["reported_state"], row["reported_age_ms"], row["reported_source"]) == (
        "INTERRUPTED",
        5_000,
        "stale",
    )
    assert (row["reported_ms"], row["stopped_ms"], row["stream_failed_ms"]) == (
        HOUR + 200_000,
        HOUR + 200_000,
        None,
    )
    store.close()


def test_a_batch_committed_twice_or_a_repeated_id_adds_nothing(tmp_path: Path) -> None:
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'a.db'}")
    first = [
        record(1, [summary(HOUR, [{"variation": 0, "count": 3}])]),
        record(2, [summary(HOUR, [{"variation": 1, "count": 4}])]),
    ]
    assert store.commit("node", first, now_ms=HOUR).payloads == 2
    again = store.commit("node", first, now_ms=HOUR)
    assert (again.payloads, again.duplicates) == (0, 2)
    # a retry appended again under a new seq, and a duplicate inside one batch
    retry = record(9, [summary(HOUR, [{"variation": 0, "count": 3}])], payload_id="id-1")
    fresh = record(10, [summary(HOUR, [{"variation": 0, "count": 1}])], payload_id="new")
    twice = record(11, [summary(HOUR, [{"variation": 0, "count": 1}])], payload_id="new")
    assert store.commit("node", [retry, fresh, twice], now_ms=HOUR).payloads == 1
    series = store.evaluation_series("shop", "production", "f", start_ms=HOUR, end_ms=HOUR + 1)
    assert series == [(HOUR, 0, 4), (HOUR, 1, 4)]
    assert store.position("node") == 11
    store.close()


def test_contexts_are_bounded_per_environment(tmp_path: Path) -> None:
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'a.db'}", context_limit=10)
    events = [
        {"kind": "index", "creationDate": HOUR + n, "context": {"kind": "user", "key": f"u{n}"}}
        for n in range(25)
    ]
    store.commit(None, [record(1, events)], now_ms=HOUR)
    assert store.context_count("shop", "production") == 10
    store.close()


def test_a_context_keeps_its_newest_copy_across_payloads_and_context_keys_add_only_new_ones() -> (
    None
):
    def index(at: int, context: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "index", "creationDate": at, "context": context}

    def keys_only(at: int) -> dict[str, Any]:
        return {"kind": "custom", "creationDate": at, "key": "buy", "contextKeys": {"user": "u1"}}

    multi = {"kind": "multi", "user": {"key": "u1", "plan": "platinum"}, "org": {"key": "o1"}}
    batch = tally(
        [
            record(1, [keys_only(HOUR + 1), index(HOUR + 1, {"key": "u1", "plan": "gold"})]),
            record(2, [index(HOUR + 3, multi), keys_only(HOUR + 9)]),
            record(3, [index(HOUR + 2, {"kind": "user", "key": "u1", "plan": "silver"})]),
            record(4, [keys_only(HOUR + 4)]),
        ]
    )
    # the kindless context at the same time as the keys-only one replaces it; the multi-kind
    # part is newer than both; a later payload's older copy and later `contextKeys` do not count
    assert batch.contexts[("shop", "production", "user", "u1")] == (
        HOUR + 3,
        {"kind": "user", "key": "u1", "plan": "platinum"},
    )
    assert batch.contexts[("shop", "production", "org", "o1")] == (
        HOUR + 3,
        {"kind": "org", "key": "o1"},
    )
    assert [c.context_key for c in batch.customs] == ["u1", "u1", "u1"]


def test_a_context_known_only_by_context_keys_is_stored_as_kind_and_key() -> None:
    event = {"kind": "custom", "creationDate": HOUR, "key": "k", "contextKeys": {"org": "o1"}}
    batch = tally([record(1, [event])])
    assert batch.contexts == {
        ("shop", "production", "org", "o1"): (HOUR, {"kind": "org", "key": "o1"})
    }


def test_custom_events_and_raw_payloads_are_stored_row_by_row(tmp_path: Path) -> None:
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'a.db'}")
    events = [
        {"kind": "custom", "creationDate": HOUR + 1, "key": "buy", "metricValue": 2.5},
        {"kind": "custom", "creationDate": HOUR + 2, "key": "buy", "metricValue": 3},
        {"kind": "custom", "creationDate": HOUR + 3, "key": "buy"},
    ]
    store.commit(None, [record(1, events)], now_ms=HOUR)
    assert store.metric("shop", "production", "buy") == (3, 2, 5.5)
    exported = list(store.export("shop", "production", start_ms=HOUR, end_ms=HOUR + 3))
    assert [orjson.loads(line) for line in exported] == events[:2]
    store.close()
