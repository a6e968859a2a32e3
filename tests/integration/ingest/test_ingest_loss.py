"""The loss test: 1,000 payloads sent concurrently by clients that retry with the same payload
ids while `flagstaff serve` is SIGKILLed three times and restarted; every acknowledged payload is
counted exactly once and nothing twice (evaluation counts and custom events both)."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import httpx
import pytest
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

pytestmark = pytest.mark.slow

PAYLOADS = 1_000
KILLS = 3
SEND_SECONDS = 60.0 + KILLS * START_TIMEOUT
"""A bound on the send, not a speed claim: a minute of sending plus the restarts, each allowed as
long as any cold start (seconds when idle, far longer on a busy two-core machine)."""


def test_sigkill_three_times_counts_every_acknowledged_payload_once(tmp_path: Path) -> None:
    server = ServerProcess(args=[], data_dir=tmp_path / "node")
    rng = random.Random()
    with running(server), admin_client(server.url) as api:
        sdk_key = create_project(api)
        payloads = [payload(index) for index in range(PAYLOADS)]
        acknowledged: set[int] = set()
        lock = threading.Lock()
        started = time.monotonic()
        deadline = started + SEND_SECONDS
        kill_points = sorted(rng.sample(range(50, PAYLOADS - 100), KILLS))
        kills_done: list[int] = []

        def send(client: httpx.Client, index: int, item: Payload) -> None:
            if send_until_acknowledged(client, server.url, sdk_key, item, deadline=deadline):
                with lock:
                    acknowledged.add(index)
                # every seventh payload is sent again after its ack: a retry of a lost answer
                if index % 7 == 0:
                    post(client, server.url, sdk_key, item)

        def kill_and_restart() -> None:
            for point in kill_points:
                wait_until(
                    lambda: len(acknowledged) >= point,  # noqa: B023 (called in this iteration)
                    timeout=max(deadline - time.monotonic(), 0.0),
                    interval=0.002,
                    what=f"{point} payloads acknowledged, the kill moment",
                )
                time.sleep(rng.uniform(0, 0.05))  # a random moment in the stream of payloads
                server.kill()
                kills_done.append(len(acknowledged))
                server.launch()
                server.wait_started()

        send_all_alongside(payloads, send, kill_and_restart, workers=24, timeout=SEND_SECONDS)
        assert len(kills_done) == KILLS, kills_done
        assert len(acknowledged) == PAYLOADS

        expected = expected_totals(payloads)
        wait_until(
            lambda: (
                server.status()["parts"]["ingest"]["backlog"] == 0
                and evaluation_totals(api) == expected
            ),
            timeout=60,
            what="every payload processed",
        )
        assert evaluation_totals(api) == expected
        assert metric_events(api) == PAYLOADS
