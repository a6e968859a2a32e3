"""Scale-out ingestion: an all-in-one node and an `--role ingest` node share PostgreSQL and a
Redis stream. Payloads go to both, some retried on the other node with the same payload id, and
the ingest node is SIGKILLed and restarted mid-send: every payload is counted exactly once."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import httpx
import pytest
import redis
from flagstaff_server.ingest.stream import STREAM
from ingest_support import (
    Payload,
    evaluation_totals,
    expected_totals,
    metric_events,
    payload,
    post,
    send_all_alongside,
    send_until_acknowledged,
)
from integration.scaleout.scaleout_cluster import ServerProcess, admin_client, create_project
from support.deadlines import wait_until
from support.processes import START_TIMEOUT, running
from support.services import postgres_database, redis_database

pytestmark = [pytest.mark.slow, pytest.mark.service]

PAYLOADS = 300
SEND_SECONDS = 60.0 + START_TIMEOUT
"""A bound on the send, not a speed claim: a minute of sending plus the ingest node's restart,
allowed as long as any cold start. Payloads for the killed node wait for it within this bound
(their fallback to the other node shares it)."""


def test_two_nodes_through_redis_count_every_payload_once(tmp_path: Path) -> None:
    with postgres_database() as database, redis_database() as redis_url:
        env = {"FLAGSTAFF_ANALYTICS_DATABASE_URL": database}
        common = ["--database", database, "--redis", redis_url]
        main = ServerProcess(args=common, data_dir=tmp_path / "main", env=env)
        ingest = ServerProcess(
            args=[*common, "--role", "ingest"], data_dir=tmp_path / "ingest", env=env
        )
        try:
            with running(main):
                with admin_client(main.url) as api:
                    sdk_key = create_project(api)
                with running(ingest), admin_client(main.url) as api:
                    run_send(main, ingest, sdk_key, api)
        finally:
            redis.Redis.from_url(redis_url).delete(STREAM)


def run_send(main: ServerProcess, ingest: ServerProcess, sdk_key: str, api: httpx.Client) -> None:
    rng = random.Random()
    payloads = [payload(index) for index in range(PAYLOADS)]
    acknowledged: set[int] = set()
    lock = threading.Lock()
    deadline = time.monotonic() + SEND_SECONDS
    kill_at = rng.randrange(50, PAYLOADS - 50)
    killed = threading.Event()

    def send(client: httpx.Client, index: int, item: Payload) -> None:
        first, other = (main, ingest) if index % 2 else (ingest, main)
        if not send_until_acknowledged(client, first.url, sdk_key, item, deadline=deadline):
            assert send_until_acknowledged(client, other.url, sdk_key, item, deadline=deadline)
        with lock:
            acknowledged.add(index)
        # a retry of a lost answer that lands on the other node
        if index % 5 == 0:
            post(client, other.url, sdk_key, item)

    def kill_and_restart() -> None:
        wait_until(
            lambda: len(acknowledged) >= kill_at,
            timeout=max(deadline - time.monotonic(), 0.0),
            interval=0.002,
            what=f"{kill_at} payloads acknowledged, the kill moment",
        )
        ingest.crash_and_restart()
        killed.set()

    send_all_alongside(payloads, send, kill_and_restart, workers=16, timeout=SEND_SECONDS)
    assert killed.is_set()
    assert len(acknowledged) == PAYLOADS

    expected = expected_totals(payloads)
    wait_until(
        lambda: evaluation_totals(api) == expected,
        timeout=60,
        what="every payload processed through the stream",
    )
    for node in (main, ingest):
        wait_until(
            lambda node=node: node.status()["parts"]["ingest"]["backlog"] == 0,
            timeout=30,
            what="the journals forwarded",
        )
    assert evaluation_totals(api) == expected
    assert metric_events(api) == PAYLOADS
