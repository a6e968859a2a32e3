"""The API role's watch over its database's history: every few seconds, whether the PostgreSQL
primary is still on the timeline (and cluster) the current epoch recorded, starting an epoch at
once when it is not: a standby promoted by other tools while this process runs, so delivery
nodes that were ahead resynchronise without waiting for the next edit (writes check first too:
`ControlPlane.write`). One query per interval while the database is a standby, none once the
primary's history is confirmed (`EpochGuard`); a failure is logged and tried again.
"""

from __future__ import annotations

import asyncio
import logging

from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class EpochWatch:
    def __init__(self, plane: ControlPlane, *, interval_seconds: float = 2.0) -> None:
        self.plane = plane
        self.interval_seconds = interval_seconds
        self.started = 0
        """Epochs this watch started."""
        self.checks = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._failing = False

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run(), name="epoch-watch")]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []

    async def check(self) -> None:
        plane = self.plane
        started = await asyncio.to_thread(
            plane.epochs.check_store, plane.store, plane.clock(), plane.feed
        )
        if started is not None:
            self.started += 1
            log.warning(
                "the database is on timeline %s, not the one epoch %d recorded: started "
                "epoch %d after seq %d",
                started.timeline,
                started.epoch - 1,
                started.epoch,
                started.started_after_seq,
            )

    async def _run(self) -> None:
        while True:
            try:
                await self.check()
                self.checks += 1
                self._failing = False
            except Exception as exc:
                if not self._failing:
                    log.warning("could not check the database's timeline: %s", exc)
                self._failing = True
            await asyncio.sleep(self.interval_seconds)
