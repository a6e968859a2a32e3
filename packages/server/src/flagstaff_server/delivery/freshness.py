"""How old a delivery node's data may be: an actor that asks the change feed for its head every
`interval_seconds` (with a timeout) and notes the wall time whenever the node held everything up
to it. The data age is the time since; before the first such check, the age of the snapshots the
node loaded from disk (its position file), else unknown.

A feed that cannot be read raises nothing here: the age just grows, which is the point (the
in-process feed retries an unreachable database inside its subscription, so the node's own
`feed_connected` stays true while no change can arrive). One cheap query per interval; nothing
on a request path.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from flagstaff_server.delivery.node import DeliveryNode
from flagstaff_server.delivery.snapshot_file import POSITION_FILE
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class Freshness:
    def __init__(
        self,
        node: DeliveryNode,
        *,
        interval_seconds: float = 2.0,
        timeout_seconds: float = 2.0,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.node = node
        self.interval_seconds = interval_seconds
        self.timeout_seconds = timeout_seconds
        self.wall = wall
        self.confirmed_at: float | None = None
        """Wall time (seconds) at which the node last held every change the feed had."""
        self.checks_failed = 0
        self._tasks: list[asyncio.Task[None]] = []

    def age_seconds(self) -> float | None:
        if self.confirmed_at is None:
            return None
        return round(max(0.0, self.wall() - self.confirmed_at), 3)

    async def start(self) -> None:
        directory = self.node.config.data_dir
        if directory is not None and self.node.from_disk:
            self.confirmed_at = await asyncio.to_thread(_written_at, directory / POSITION_FILE)
        self._tasks = [asyncio.create_task(self._run(), name="delivery-freshness")]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []

    async def _run(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.interval_seconds)

    async def check(self) -> None:
        """One look at the feed's head (the actor's step; tests call it directly)."""
        asked = self.wall()
        try:
            async with asyncio.timeout(self.timeout_seconds):
                head = await self.node.feed.latest_seq()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.checks_failed += 1
            log.debug("delivery freshness: the feed's head is not readable: %s", exc)
            return
        if self.node.current and self.node.position >= head:
            self.confirmed_at = asked


def _written_at(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
