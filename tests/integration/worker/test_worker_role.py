"""`flagstaff serve --role worker` as a real process: it serves `/status` with the worker's part
(its lease holder name, its jobs) and `/metrics` with the worker's lines, and no management API
or delivery endpoints."""

from __future__ import annotations

from pathlib import Path

from flagstaff_server.adapters.sql.engine import sqlite_url
from support.processes import ServeProcess, loopback_get, running


def test_a_worker_process_answers_status_and_metrics_only(tmp_path: Path) -> None:
    database = sqlite_url(tmp_path / "shared.db")
    worker = ServeProcess(
        data_dir=tmp_path / "worker",
        name="worker",
        args=["--role", "worker", "--database", database],
    )
    with running(worker):
        body = worker.status()
        assert body["role"] == "worker"
        assert set(body["parts"]) == {"store", "changeFeed", "worker"}
        part = body["parts"]["worker"]
        assert part["status"] == "ok"
        assert str(worker.process.pid if worker.process else "") in part["holder"]
        metrics = loopback_get(f"{worker.url}/metrics", timeout=5)
        assert metrics.status_code == 200
        assert metrics.headers["content-type"].startswith("text/plain")
        assert loopback_get(f"{worker.url}/api/v2/projects", timeout=5).status_code == 404
        assert loopback_get(f"{worker.url}/sdk/latest-all", timeout=5).status_code == 404
