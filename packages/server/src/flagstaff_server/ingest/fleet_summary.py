"""How fresh the SDK fleet is, in a few numbers for the status page: running instances, those on
stale flag data, stopped ones and the oldest data any running one has, overall and for the
environments with the most stale instances. Read from the fleet view ingestion keeps
(`ingest.fleet`) by an actor every `interval_seconds`, with a timeout, so `/status` shows the
last summary and when it was taken without touching the analytics store itself.

While the analytics store is unreachable the last summary stays, with its time and the error.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, select

from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.analytics_tables import instances
from flagstaff_server.ingest.fleet import instance_view
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

ROW_LIMIT = 10_000
"""Instances read per summary, most recently heard first: a bound on the cost, not on the
fleet (older rows are stopped instances, or the summary says it was cut)."""
ENVIRONMENT_LIMIT = 10


def summarize(rows: Iterable[Mapping[str, Any]], *, now_ms: int) -> dict[str, Any]:
    """The status page's fleet figures at `now_ms` from stored instance rows."""
    running = stale = stopped = 0
    worst: int | None = None
    by_environment: dict[tuple[str, str], dict[str, Any]] = {}
    count = 0
    for row in rows:
        count += 1
        view = instance_view(row, now_ms=now_ms)
        key = (str(row["project"]), str(row["environment"]))
        env = by_environment.setdefault(
            key,
            {
                "project": key[0],
                "environment": key[1],
                "running": 0,
                "stale": 0,
                "worstDataAgeMs": None,
            },
        )
        if view["stopped"]:
            stopped += 1
            continue
        running += 1
        env["running"] += 1
        if view["staleFlagData"]:
            stale += 1
            env["stale"] += 1
        age = view["dataAgeMs"]
        if isinstance(age, int):
            worst = age if worst is None else max(worst, age)
            env["worstDataAgeMs"] = (
                age if env["worstDataAgeMs"] is None else max(env["worstDataAgeMs"], age)
            )
    ranked = sorted(
        (env for env in by_environment.values() if env["running"]),
        key=lambda env: (
            -env["stale"],
            -(env["worstDataAgeMs"] or 0),
            env["project"],
            env["environment"],
        ),
    )
    return {
        "running": running,
        "stale": stale,
        "stopped": stopped,
        "worstDataAgeMs": worst,
        "truncated": count >= ROW_LIMIT,
        "environments": ranked[:ENVIRONMENT_LIMIT],
    }


def read_rows(connection: Connection) -> list[dict[str, Any]]:
    query = select(instances).order_by(instances.c.last_ms.desc()).limit(ROW_LIMIT)
    return [dict(row) for row in connection.execute(query).mappings()]


@dataclass(slots=True, kw_only=True)
class FleetWatch:
    analytics: AnalyticsStore
    interval_seconds: float = 15.0
    timeout_seconds: float = 5.0
    wall: Callable[[], float] = time.time
    summary: dict[str, Any] | None = None
    as_of_ms: int | None = None
    error: str | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def block(self) -> dict[str, Any]:
        """The `fleet` block of `/status`'s ingest part."""
        return {"asOf": self.as_of_ms, "error": self.error, **(self.summary or {})}

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run(), name="ingest-fleet-summary")]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []

    async def _run(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self.interval_seconds)

    async def refresh(self) -> None:
        """One summary (the actor's step; tests call it directly)."""
        now_ms = int(self.wall() * 1000)
        try:
            async with asyncio.timeout(self.timeout_seconds):
                rows = await asyncio.to_thread(self.analytics.run, read_rows)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self.error = f"the analytics store did not answer within {self.timeout_seconds:g} s"
            return
        except StoreUnavailable as exc:
            self.error = exc.message
            return
        except Exception as exc:
            log.exception("ingest: the SDK fleet summary failed")
            self.error = str(exc) or type(exc).__name__
            return
        self.summary = summarize(rows, now_ms=now_ms)
        self.as_of_ms = now_ms
        self.error = None
