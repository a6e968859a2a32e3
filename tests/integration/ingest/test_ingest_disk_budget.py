"""A disk budget far below a journal segment (64 MiB): filled while the analytics store is down,
the node answers 503; once processing catches up it accepts again, and so it does after a
restart. The budget counts only what is not processed yet, whatever the segment holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from ingest_support import Payload, evaluation_totals, expected_totals, payload, post
from integration.scaleout.scaleout_cluster import ServerProcess, admin_client, create_project
from support.deadlines import wait_until
from support.private_postgres import private_postgres
from support.processes import running

pytestmark = [pytest.mark.slow, pytest.mark.service]

BUDGET = 20_000
"""Bytes: about 35 of the test's payloads, and 1/3,000 of a segment."""


def ingest_status(server: ServerProcess) -> dict[str, Any]:
    part: dict[str, Any] = server.status()["parts"]["ingest"]
    return part


def caught_up(server: ServerProcess) -> bool:
    ingest = ingest_status(server)
    return ingest["analyticsStore"] == "ok" and ingest["processedSeq"] == ingest["durableSeq"]


def test_a_budget_below_a_segment_frees_up_once_processed_and_after_a_restart(
    tmp_path: Path,
) -> None:
    with private_postgres() as postgres:
        server = ServerProcess(
            args=[],
            data_dir=tmp_path / "node",
            env={
                "FLAGSTAFF_ANALYTICS_DATABASE_URL": postgres.url,
                "FLAGSTAFF_INGEST_DISK_BUDGET_BYTES": str(BUDGET),
            },
        )
        accepted: list[Payload] = []
        with running(server), admin_client(server.url) as api, httpx.Client(timeout=10) as client:
            sdk_key = create_project(api)
            wait_until(lambda: caught_up(server), what="the processor to start", interval=0.1)

            # fill: nothing is processed while the store is down
            postgres.stop()
            statuses: list[int] = []
            for index in range(200):
                item = payload(index)
                status = post(client, server.url, sdk_key, item)
                statuses.append(status)
                if status != 202:
                    break
                accepted.append(item)
            assert statuses[-1] == 503, statuses
            assert len(accepted) > 10

            # processing catches up: the whole budget is free again
            postgres.start()
            wait_until(
                lambda: caught_up(server), timeout=60, what="the backlog processed", interval=0.1
            )
            for index in range(200, 210):
                item = payload(index)
                assert post(client, server.url, sdk_key, item) == 202
                accepted.append(item)
            assert ingest_status(server)["journalBytes"] > BUDGET  # the segment keeps them all
            wait_until(
                lambda: caught_up(server),
                timeout=30,
                what="the new payloads processed",
                interval=0.1,
            )

        # a restart reads the same segment back: what it holds is processed, so it counts nothing
        with running(server), admin_client(server.url) as api, httpx.Client(timeout=10) as client:
            wait_until(
                lambda: caught_up(server), timeout=30, what="the processor to restart", interval=0.1
            )
            for index in range(300, 310):
                item = payload(index)
                assert post(client, server.url, sdk_key, item) == 202
                accepted.append(item)
            wait_until(
                lambda: caught_up(server) and evaluation_totals(api) == expected_totals(accepted),
                timeout=30,
                what="every accepted payload counted once",
                interval=0.1,
            )
            assert ingest_status(server)["unprocessedBytes"] == 0
