"""The analytics store down while events arrive: ingestion keeps acknowledging into its journal,
and after recovery every payload is counted exactly once. Over the disk budget it answers 503 with
Retry-After instead of dropping anything. The outage lasts until the node has reported the store
down and acknowledged payloads while it was, and at least OUTAGE_SECONDS; a steady send runs for
LEAD_SECONDS on each side of it. The issue's full length (a 60 s send, the store stopped for 30 s
of it) is `INGEST_LEAD_SECONDS=15 INGEST_OUTAGE_SECONDS=30`."""

from __future__ import annotations

import os
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
    send_until_acknowledged,
)
from integration.scaleout.scaleout_cluster import ServerProcess, admin_client, create_project
from support.deadlines import Deadline, wait_until
from support.private_postgres import private_postgres
from support.processes import running

pytestmark = [pytest.mark.slow, pytest.mark.service]

LEAD_SECONDS = float(os.environ.get("INGEST_LEAD_SECONDS", "2"))
OUTAGE_SECONDS = float(os.environ.get("INGEST_OUTAGE_SECONDS", "4"))
ACKNOWLEDGED_WHILE_DOWN = 20
"""Payloads the node must have acknowledged with the store down before it comes back."""
PHASE_TIMEOUT = 90.0


def hold(seconds: float) -> None:
    """Let the send go on for `seconds`: a length of the scenario, not a wait for anything."""
    deadline = Deadline(seconds)
    while not deadline.passed():
        time.sleep(0.05)


def test_store_stopped_mid_send_then_exact_counts_after_recovery(tmp_path: Path) -> None:
    with private_postgres() as postgres:
        server = ServerProcess(
            args=[],
            data_dir=tmp_path / "node",
            env={"FLAGSTAFF_ANALYTICS_DATABASE_URL": postgres.url},
        )
        with running(server), admin_client(server.url) as api:
            sdk_key = create_project(api)
            sent: list[Payload] = []
            acknowledged_while_down: list[int] = []
            seen_down = threading.Event()
            stop = threading.Event()

            def send() -> None:
                with httpx.Client(timeout=10) as client:
                    index = 0
                    while not stop.is_set():
                        item = payload(index)
                        deadline = time.monotonic() + 60
                        assert send_until_acknowledged(
                            client, server.url, sdk_key, item, deadline=deadline
                        )
                        sent.append(item)
                        if not postgres.is_running():
                            acknowledged_while_down.append(index)
                        index += 1

            def watch() -> None:
                while not stop.is_set():
                    if server.status()["parts"]["ingest"]["analyticsStore"] == "down":
                        seen_down.set()
                        return
                    time.sleep(0.1)  # polling the node's status during the outage

            sender = threading.Thread(target=send)
            watcher = threading.Thread(target=watch)
            sender.start()
            try:
                hold(LEAD_SECONDS)
                wait_until(lambda: len(sent) > 0, timeout=PHASE_TIMEOUT, what="a first ack")
                postgres.stop()
                watcher.start()
                hold(OUTAGE_SECONDS)
                wait_until(
                    lambda: (
                        seen_down.is_set()
                        and len(acknowledged_while_down) >= ACKNOWLEDGED_WHILE_DOWN
                    ),
                    timeout=PHASE_TIMEOUT,
                    what="the store reported down and payloads acknowledged meanwhile",
                    state=lambda: (seen_down.is_set(), len(acknowledged_while_down)),
                    interval=0.05,
                )
                postgres.start()
                hold(LEAD_SECONDS)
            finally:
                stop.set()
            sender.join(timeout=120)
            if watcher.is_alive():
                watcher.join(timeout=10)
            assert not sender.is_alive()
            assert acknowledged_while_down, "nothing was acknowledged during the outage"
            assert seen_down.is_set(), "the node never reported the analytics store down"

            expected = expected_totals(sent)
            wait_until(
                lambda: (
                    evaluation_totals(api) == expected
                    and server.status()["parts"]["ingest"]["backlog"] == 0
                ),
                timeout=90,
                what="the backlog processed after the outage",
            )
            assert evaluation_totals(api) == expected
            assert metric_events(api) == len(sent)


def test_over_the_disk_budget_answers_503_with_retry_after_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    # the analytics "database" is a directory: the store can never open, so nothing is processed
    # and the journal only grows
    blocked = tmp_path / "analytics-is-a-directory"
    blocked.mkdir()
    server = ServerProcess(
        args=[],
        data_dir=tmp_path / "node",
        env={
            "FLAGSTAFF_ANALYTICS_DATABASE_URL": f"sqlite:///{blocked}",
            "FLAGSTAFF_INGEST_DISK_BUDGET_BYTES": "20000",
        },
    )
    with running(server), admin_client(server.url) as api, httpx.Client(timeout=10) as client:
        sdk_key = create_project(api)
        statuses: list[int] = []
        for index in range(200):
            status = post(client, server.url, sdk_key, payload(index))
            statuses.append(status)
            if status == 503:
                break
        assert statuses[-1] == 503
        accepted = statuses.count(202)
        assert accepted > 0
        assert set(statuses[:-1]) == {202}
        refused = client.post(
            f"{server.url}/bulk",
            content=payload(999).body,
            headers={"Authorization": sdk_key, "Content-Type": "application/json"},
        )
        assert refused.status_code == 503
        assert int(refused.headers["Retry-After"]) > 0
        ingest = server.status()["parts"]["ingest"]
        assert ingest["durableSeq"] == accepted
        assert ingest["analyticsStore"] == "down"
