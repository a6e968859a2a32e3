"""Exposures for experiments: a feature event whose reason says `inExperiment` exposes each of
its contexts to the variation served, the earliest exposure per flag version is kept within a
batch and across batches (the store's upsert), and anything else exposes nobody."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.analytics_tables import exposures
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.tally import tally
from sqlalchemy import select


def record(events: list[dict[str, Any]], seq: int = 1) -> Record:
    return Record(
        seq=seq,
        received_ms=5_000,
        kind=Kind.ANALYTICS,
        project="p",
        environment="e",
        payload_id=f"id-{seq}",
        payload=orjson.dumps(events),
    )


def feature(
    at: int, variation: Any = 1, *, in_experiment: bool = True, **who: Any
) -> dict[str, Any]:
    return {
        "kind": "feature",
        "creationDate": at,
        "key": "f",
        "version": 3,
        "variation": variation,
        "reason": {"kind": "FALLTHROUGH", "inExperiment": in_experiment},
        **who,
    }


def test_in_experiment_feature_events_expose_each_context_once_at_its_earliest() -> None:
    batch = tally(
        [
            record(
                [
                    feature(200, 1, context={"kind": "user", "key": "a"}),
                    feature(100, 0, context={"kind": "user", "key": "a"}),
                    feature(
                        150,
                        1,
                        context={"kind": "multi", "user": {"key": "b"}, "org": {"key": "o"}},
                    ),
                    feature(160, 0, contextKeys={"user": "c"}),
                    feature(170, 0, in_experiment=False, context={"kind": "user", "key": "d"}),
                    feature(180, "1", context={"kind": "user", "key": "e"}),
                    feature(190, True, context={"kind": "user", "key": "e"}),
                ]
            )
        ]
    )
    assert batch.exposures == {
        ("p", "e", "f", 3, "user", "a"): (100, 0),
        ("p", "e", "f", 3, "user", "b"): (150, 1),
        ("p", "e", "f", 3, "org", "o"): (150, 1),
        ("p", "e", "f", 3, "user", "c"): (160, 0),
    }


def test_the_store_keeps_the_earliest_exposure_across_batches(tmp_path: Path) -> None:
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        store.commit(None, [record([feature(300, 1, contextKeys={"user": "a"})], 1)], now_ms=1)
        store.commit(None, [record([feature(100, 0, contextKeys={"user": "a"})], 2)], now_ms=1)
        store.commit(None, [record([feature(200, 1, contextKeys={"user": "a"})], 3)], now_ms=1)
        rows = store.run(
            lambda c: c.execute(
                select(exposures.c.context_key, exposures.c.first_ms, exposures.c.variation)
            ).all()
        )
    finally:
        store.close()
    assert [tuple(row) for row in rows] == [("a", 100, 0)]
