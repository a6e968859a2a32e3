"""Coalesced probes: every caller asking for a check gets the result of one that started after
its call, callers asking meanwhile share it, checks run at most once per interval and each is
bounded by a timeout. A failed check is counted and logged, and answers False. Runs on the event
loop; what one check does is the caller's (`check`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class CoalescedProbe:
    def __init__(
        self,
        check: Callable[[], Awaitable[None]],
        counts: Counter[str],
        *,
        clock: Callable[[], float],
        interval_seconds: float,
        timeout_seconds: float,
    ) -> None:
        self._check = check
        self._counts = counts
        self._clock = clock
        self._interval = interval_seconds
        self._timeout = timeout_seconds
        self._pending: asyncio.Future[bool] | None = None
        self._task: asyncio.Task[None] | None = None
        self._last = float("-inf")

    async def __call__(self) -> bool:
        """Wait for a check that started after this call: whether it succeeded."""
        if self._pending is None:
            self._pending = asyncio.get_running_loop().create_future()
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._run(), name="delivery-probe")
        return await asyncio.shield(self._pending)

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while self._pending is not None:
            pending, self._pending = self._pending, None
            wait = self._last + self._interval - self._clock()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last = self._clock()
            try:
                async with asyncio.timeout(self._timeout):
                    await self._check()
                ok = True
            except Exception as exc:
                self._counts["probe_failed"] += 1
                log.warning("delivery probe failed: %s", exc)
                ok = False
            if not pending.done():
                pending.set_result(ok)
