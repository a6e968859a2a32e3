"""The SDK fleet in a few numbers for the status page: running, on stale flag data, stopped, the
oldest data of a running instance, and the environments with the most stale instances first;
read from a real analytics store (SQLite) by the watch, which keeps its last summary while the
store is unreachable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.analytics_tables import instances
from flagstaff_server.ingest.fleet_summary import FleetWatch, summarize
from sqlalchemy import insert
from support.ports import free_port

NOW = 1_800_000_000_000


def row(instance: str, environment: str = "prod", **values: Any) -> dict[str, Any]:
    base = {
        "project": "p",
        "environment": environment,
        "instance_id": instance,
        "first_ms": NOW - 3_600_000,
        "last_ms": NOW - 60_000,
        "dropped_events": 0,
        "streaming": True,
        "stream_ok": True,
        "stream_ok_ms": NOW - 3_600_000,
        "stream_failed_ms": None,
        "stopped_ms": None,
    }
    return {**base, **values}


ROWS = [
    row("current"),
    row("lost-a-minute-ago", stream_ok=False, stream_failed_ms=NOW - 60_000),
    row("lost-ten-minutes-ago", stream_ok=False, stream_failed_ms=NOW - 600_000),
    row("closed", stopped_ms=NOW - 1000),
    row("stale-elsewhere", environment="test", stream_ok=False, stream_failed_ms=NOW - 900_000),
    row("silent", environment="test", last_ms=NOW - 3 * 15 * 60_000),
]


def test_the_fleet_is_counted_and_its_oldest_data_found() -> None:
    summary = summarize(ROWS, now_ms=NOW)
    assert {k: summary[k] for k in ("running", "stale", "stopped", "worstDataAgeMs")} == {
        "running": 4,
        "stale": 2,
        "stopped": 2,
        "worstDataAgeMs": 900_000,
    }
    assert summary["truncated"] is False
    # as many stale in each: the older data first
    listed = [
        (env["environment"], env["running"], env["stale"], env["worstDataAgeMs"])
        for env in summary["environments"]
    ]
    assert listed == [("test", 1, 1, 900_000), ("prod", 3, 1, 600_000)]
    assert {env["project"] for env in summary["environments"]} == {"p"}


async def test_the_watch_reads_the_analytics_store_and_keeps_its_last_summary(
    tmp_path: Path,
) -> None:
    analytics = AnalyticsStore(sqlite_url(tmp_path / "analytics.db"))
    analytics.run(lambda connection: connection.execute(insert(instances), ROWS))
    watch = FleetWatch(analytics=analytics, wall=lambda: NOW / 1000)
    assert watch.block() == {"asOf": None, "error": None}
    await watch.refresh()
    block = watch.block()
    assert (block["asOf"], block["error"], block["running"], block["stale"]) == (NOW, None, 4, 2)
    analytics.close()
    # nothing listens there: every use is StoreUnavailable
    watch.analytics = AnalyticsStore(f"postgresql://flagstaff@127.0.0.1:{free_port()}/gone")
    await watch.refresh()
    block = watch.block()
    assert (block["asOf"], block["running"]) == (NOW, 4)
    assert "analytics store unavailable" in block["error"]
