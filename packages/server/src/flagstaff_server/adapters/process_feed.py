"""The in-process change feed of the embedded mode: subscribers read the store's outbox and are
woken by `publish` after each commit. Holds no copy of the changes itself."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flagstaff_server.adapters.outbox import fetch_changes, fetch_latest_seq
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.services.ports import Change, ChangeFeed, Store

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, eq=False)
class _Waker:
    loop: asyncio.AbstractEventLoop
    event: asyncio.Event

    def wake(self) -> None:
        # publish runs in whatever thread committed; the event belongs to the subscriber's loop
        with contextlib.suppress(RuntimeError):  # that loop has closed
            self.loop.call_soon_threadsafe(self.event.set)


class InProcessChangeFeed:
    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = 500,
        idle_check: float = 5.0,
        retry_delay: float = 1.0,
    ) -> None:
        """`idle_check`: how often an idle subscriber looks at the outbox anyway, so a commit
        whose `publish` never came is still delivered."""
        self._store = store
        self._batch_size = batch_size
        self._idle_check = idle_check
        self._retry_delay = retry_delay
        self._wakers: set[_Waker] = set()
        self._lock = threading.Lock()

    @property
    def poll_seconds(self) -> float:
        """How often an idle subscriber reads the outbox (`idle_check`)."""
        return self._idle_check

    def publish(self, seq: int) -> None:
        with self._lock:
            wakers = list(self._wakers)
        for waker in wakers:
            waker.wake()

    async def subscribe(self, after_seq: int) -> AsyncGenerator[Change, None]:
        waker = _Waker(asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._wakers.add(waker)
        try:
            position = after_seq
            outbox_down = False
            while True:
                # cleared before reading: a publish during the read sets it again
                waker.event.clear()
                try:
                    batch = await fetch_changes(self._store, position, self._batch_size)
                except StoreUnavailable as exc:
                    if not outbox_down:
                        log.warning("change feed cannot read the outbox, retrying: %s", exc)
                    outbox_down = True
                    await _wait(waker.event, self._retry_delay)
                    continue
                outbox_down = False
                for change in batch:
                    yield change
                    position = change.seq
                if len(batch) < self._batch_size:
                    await _wait(waker.event, self._idle_check)
        finally:
            with self._lock:
                self._wakers.discard(waker)

    async def latest_seq(self) -> int:
        return await fetch_latest_seq(self._store)

    async def aclose(self) -> None:
        return None


async def _wait(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()


if TYPE_CHECKING:
    _conforms: type[ChangeFeed] = InProcessChangeFeed
