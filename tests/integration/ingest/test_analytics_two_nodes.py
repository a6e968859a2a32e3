"""Two ingest nodes (two regions) processing into ONE analytics PostgreSQL: the same payload
committed by both at the same moment (a batch accepted in B, retried to A, both processors busy)
is counted once, and neither node mistakes the other's commit for a poison payload. The race is
made exact: node A's transaction holds the payload's row uncommitted while node B's commit waits
on it (seen in `pg_locks`), then A commits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import orjson
import psycopg
import pytest
from flagstaff_server.ingest.analytics import AnalyticsStore, Committed
from flagstaff_server.ingest.payload_values import HOUR_MS
from flagstaff_server.ingest.processor import Consumer
from flagstaff_server.ingest.record import Kind, Record
from sqlalchemy import text
from support.deadlines import wait_until
from support.services import postgres_database

pytestmark = pytest.mark.service

HOUR = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS


def record(seq: int, events: Any, *, payload_id: str, kind: Kind = Kind.ANALYTICS) -> Record:
    return Record(
        seq=seq,
        received_ms=HOUR + 5,
        kind=kind,
        project="shop",
        environment="production",
        payload_id=payload_id,
        payload=orjson.dumps(events),
    )


def summary(count: int, flag: str = "checkout") -> dict[str, Any]:
    return {
        "kind": "summary",
        "startDate": HOUR,
        "endDate": HOUR + 10,
        "features": {flag: {"default": False, "counters": [{"variation": 1, "count": count}]}},
    }


def diagnostic(instance: str, at: int, dropped: int) -> dict[str, Any]:
    return {
        "kind": "diagnostic",
        "id": {"diagnosticId": instance, "sdkKeySuffix": "abcdef"},
        "creationDate": at,
        "droppedEvents": dropped,
        "streamInits": [],
    }


@contextmanager
def two_nodes() -> Iterator[tuple[AnalyticsStore, AnalyticsStore, str]]:
    """Region A's and region B's stores (each its own pool, as two processes have) on one
    throwaway database, and that database's URL."""
    with postgres_database("flagstaff_analytics") as url:
        a, b = AnalyticsStore(url), AnalyticsStore(url)
        try:
            a.position("warm-up")  # the schema, migrated once before the race
            yield a, b, url
        finally:
            a.close()
            b.close()


def waiting_on_a_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return row is not None and row[0] > 0


def race(
    a: AnalyticsStore,
    url: str,
    first: list[Record],
    second: Callable[[], Any],
) -> Future[Any]:
    """A commits `first` in a transaction it holds open until `second` (B's work, in a thread)
    waits on A's rows; then A commits. Returns B's outcome."""
    pool = ThreadPoolExecutor(max_workers=1)
    with a.engine.connect() as connection, connection.begin():
        a.commit_in(connection, "node-a", first, now_ms=HOUR)
        outcome = pool.submit(second)
        wait_until(lambda: waiting_on_a_lock(url), timeout=20, what="B to wait on A's row")
    pool.shutdown(wait=True)
    return outcome


def test_a_payload_committed_by_both_nodes_at_once_counts_once() -> None:
    with two_nodes() as (a, b, url):
        retried = record(7, [summary(5)], payload_id="retried-in-a")
        other = record(8, [summary(2)], payload_id="only-in-b")
        outcome = race(a, url, [retried], lambda: b.commit("node-b", [retried, other], now_ms=HOUR))

        assert outcome.result() == Committed(payloads=1, duplicates=1)
        series = a.evaluation_series(
            "shop", "production", "checkout", start_ms=HOUR, end_ms=HOUR + 1
        )
        assert series == [(HOUR, 1, 7)]
        assert (a.position("node-a"), b.position("node-b")) == (7, 8)


def test_the_node_that_loses_the_race_counts_a_duplicate_not_a_poison_payload() -> None:
    with two_nodes() as (a, b, url):
        retried = record(3, [summary(4)], payload_id="retried-in-b")
        consumer = Consumer(b, wall=lambda: HOUR / 1000)

        def process() -> None:
            asyncio.run(consumer._process("node-b", [retried]))

        race(a, url, [retried], process).result()

        assert consumer.counts["quarantined"] == 0
        assert consumer.counts["duplicates"] == 1
        with b.engine.connect() as connection:
            held = connection.execute(text("SELECT count(*) FROM ingest_quarantine")).scalar()
        assert held == 0
        series = a.evaluation_series(
            "shop", "production", "checkout", start_ms=HOUR, end_ms=HOUR + 1
        )
        assert series == [(HOUR, 1, 4)]


def test_one_sdk_instance_reported_through_both_nodes_at_once_merges_both_reports() -> None:
    with two_nodes() as (a, b, url):
        # the SDK's diagnostics went to A, then (failed over) to B: two payloads, one instance
        in_a = record(1, diagnostic("i1", HOUR + 1_000, 3), payload_id="d-a", kind=Kind.DIAGNOSTIC)
        in_b = record(2, diagnostic("i1", HOUR + 2_000, 4), payload_id="d-b", kind=Kind.DIAGNOSTIC)
        outcome = race(a, url, [in_a], lambda: b.commit("node-b", [in_b], now_ms=HOUR))

        assert outcome.result() == Committed(payloads=1, duplicates=0)
        (row,) = a.sdk_instances("shop", "production")
        assert row["dropped_events"] == 7
        assert (row["first_ms"], row["last_ms"]) == (HOUR + 1_000, HOUR + 2_000)
