"""Keeping a delivery node's snapshots on disk: environments marked changed are written a moment
later (a burst makes one write), with the parts' own state first (`pre_writers`, e.g. the
break-glass overlay, so it is never older than the snapshots it explains) and the feed position
last; at shutdown once more. A failed write is counted, logged and retried; serving goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from flagstaff_server.delivery import snapshot_file
from flagstaff_server.delivery.position import FeedPosition
from flagstaff_server.delivery.store import EnvironmentId, SnapshotStore
from flagstaff_server.tasks import finish_in_thread

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Collected:
    """What one persist step writes, captured on the loop: the pre-writers' writes, then the
    snapshot files, then the feed position."""

    first: list[Callable[[], None]]
    files: dict[str, snapshot_file.Held | None]
    position: FeedPosition | None


class SnapshotPersister:
    """`position()` is the node's feed position when a step is collected."""

    def __init__(
        self,
        store: SnapshotStore,
        directory: Path | None,
        counts: Counter[str],
        *,
        position: Callable[[], FeedPosition],
        delay_seconds: float,
        retry_seconds: float,
    ) -> None:
        self._store = store
        self._directory = directory
        self._counts = counts
        self._position = position
        self._delay = delay_seconds
        self._retry = retry_seconds
        self.pre_writers: list[Callable[[], Callable[[], None] | None]] = []
        """Called on the loop when snapshots are collected for writing: each returns a blocking
        write (or None), run before the snapshot files are written."""
        self._dirty: set[EnvironmentId] = set()
        self._wake = asyncio.Event()
        self._persisted_position: FeedPosition | None = None

    @property
    def persisted_position(self) -> FeedPosition | None:
        """The feed position the files on disk hold (None before any was read or written)."""
        return self._persisted_position

    def loaded(self, position: FeedPosition) -> None:
        """The position the files on disk hold (read at start)."""
        self._persisted_position = position

    def add(self, env_ids: Iterable[EnvironmentId]) -> None:
        """These environments' files are out of date (written at the next step)."""
        self._dirty.update(env_ids)

    def wake(self) -> None:
        """Start a step soon (the position moved, or something was marked)."""
        self._wake.set()

    def stored_environments(self) -> list[EnvironmentId]:
        """Environments with a file on disk (a removed one's file must go too)."""
        if self._directory is None:
            return []
        return snapshot_file.stored_environments(self._directory)

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(self._delay)
            self._wake.clear()
            collected = self._collect(everything=False)
            try:
                # A stop waits for this write to end before its own (`write_now`): two writers of
                # the same files and change log at once could leave the log unreadable, and a
                # client with a basis would get a full transfer after the restart.
                await finish_in_thread(self._write, collected)
                self._counts["persist"] += 1
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._counts["persist_error"] += 1
                log.error("could not write delivery snapshots: %s", exc)
                self._dirty.update(snapshot_file.environment_of(name) for name in collected.files)
                self._wake.set()
                await asyncio.sleep(self._retry)

    async def write_now(self) -> None:
        """One step at once (at shutdown); a failure is logged."""
        try:
            await asyncio.to_thread(self._write, self._collect(everything=False))
        except OSError as exc:
            log.error("could not write delivery snapshots at shutdown: %s", exc)

    def _collect(self, *, everything: bool) -> Collected:
        first = [write for write in (collect() for collect in self.pre_writers) if write]
        dirty = set(self._store.environments) if everything else self._dirty
        self._dirty = set()
        files: dict[str, snapshot_file.Held | None] = {}
        for project, key in dirty:
            env = self._store.get(project, key)
            name = snapshot_file.file_name(project, key)
            files[name] = None if env is None else (env.snapshot, env.credentials)
        current = self._position()
        position = current if current != self._persisted_position else None
        return Collected(first, files, position)

    def _write(self, collected: Collected) -> None:
        assert self._directory is not None
        for write_first in collected.first:
            write_first()
        files, position = collected.files, collected.position
        snapshot_file.write(self._directory, files, position)
        if position is not None:
            self._persisted_position = position
