"""When the disk cache is written: a moment after the data changes (changes in a burst make one
write) and once more as the client closes, never the same revision twice. The file format and
the atomic write are `cache`'s; the write runs in a worker thread, off the actor's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from flagstaff_sdk.cache import cache_path, write_cache
from flagstaff_sdk.clock import Clock
from flagstaff_sdk.pause import Pause
from flagstaff_sdk.store import Store

log = logging.getLogger("flagstaff_sdk")


class CacheWriter:
    """`watch()` on the actor's loop, then `run()` until cancelled and `write()` at close.
    `revision` is the store revision the file already holds (-1: none)."""

    def __init__(
        self, cache_dir: Path, sdk_key: str, store: Store, clock: Clock, *, revision: int
    ) -> None:
        self._path = cache_path(cache_dir, sdk_key)
        self._store = store
        self._clock = clock
        self._revision = revision
        self._dirty = asyncio.Event()

    def watch(self) -> None:
        loop = asyncio.get_running_loop()
        dirty = self._dirty

        def mark_dirty() -> None:
            with contextlib.suppress(RuntimeError):  # a change arriving after close
                loop.call_soon_threadsafe(dirty.set)

        self._store.watch(mark_dirty)

    async def run(self, pause: Pause, delay: float) -> None:
        while True:
            await self._dirty.wait()
            await pause(delay)
            self._dirty.clear()
            await self.write()

    async def write(self) -> None:
        store = self._store
        if store.data is None or store.revision == self._revision:
            return
        revision = store.revision
        holding = store.holding
        try:
            await asyncio.to_thread(write_cache, self._path, holding, self._clock.wall())
        except OSError as exc:
            log.warning("could not write the Flagstaff disk cache: %s", exc)
            return
        self._revision = revision
