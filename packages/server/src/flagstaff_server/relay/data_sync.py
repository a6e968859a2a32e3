"""How data reaches the relay's node: upstream changes (coalesced on the event loop into one diff
against what the node holds beneath any break-glass override) and offline data files (re-read
when they change), each applied as numbered changes the node broadcasts, then written through to
the environment's Redis store. Must not open connections of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from flagstaff_sdk.status import DataSourceState

from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.delivery.store import EnvironmentId
from flagstaff_server.relay.environment import RelayEnvironment
from flagstaff_server.relay.feed import RelayFeed
from flagstaff_server.relay.node import RelayNode
from flagstaff_server.relay.offline import DataFileError, file_stamp, read_data_file
from flagstaff_server.relay.reconcile import ItemChange, changes_from_data, changes_from_json
from flagstaff_server.services.ports import ChangeKind

log = logging.getLogger(__name__)


class DataSync:
    def __init__(self, node: RelayNode, feed: RelayFeed, *, offline_interval: float) -> None:
        self.node = node
        self.feed = feed
        self._offline_interval = offline_interval

    def request(self, state: RelayEnvironment) -> None:
        """Upstream data changed (on the loop): coalesce bursts into one diff."""
        if not state.sync_scheduled:
            state.sync_scheduled = True
            asyncio.get_running_loop().call_soon(self._sync, state)

    def _sync(self, state: RelayEnvironment) -> None:
        state.sync_scheduled = False
        upstream = state.upstream
        if upstream is None or upstream.data is None:
            return
        env = self.node.store.get(*state.env_id)
        if env is None:
            return
        # decided against the data beneath any break-glass override, which stays served
        self.apply(state, changes_from_data(self.node.store.held(env), upstream.data))
        state.data_confirmed = time.monotonic()

    def apply(self, state: RelayEnvironment, changes: list[ItemChange]) -> None:
        for change in changes:
            self.apply_change(state.env_id, change.kind, change.key, change.version, change.item)
        state.changes += len(changes)
        first = state.env_id not in self.node.ready
        if first:
            self.node.mark_ready(state.env_id)
            log.info("relay environment %s is complete", state.config.name)
        if state.store is not None:
            if first:
                state.store.repopulate()
            elif changes:
                state.store.changed(changes)

    def apply_change(
        self,
        env_id: EnvironmentId,
        kind: ChangeKind,
        key: str,
        version: int,
        item: dict[str, Any] | None,
    ) -> None:
        change = self.feed.next_change(
            project=env_id[0],
            environment=env_id[1],
            kind=kind,
            key=key,
            version=version,
            item=item,
        )
        self.node.apply(change)

    def complete_snapshot(self, state: RelayEnvironment) -> Snapshot | None:
        env = self.node.store.get(*state.env_id)
        if env is None or state.env_id not in self.node.ready:
            return None
        return env.snapshot

    async def watch_file(self, state: RelayEnvironment) -> None:
        path = state.config.offline_file
        assert path is not None
        seen: tuple[float, int] | None = None
        while True:
            stamp = file_stamp(path)
            if stamp != seen:
                seen = stamp
                try:
                    data = await asyncio.to_thread(read_data_file, path)
                except DataFileError as exc:
                    self._offline_failed(state, str(exc))
                else:
                    env = self.node.store.get(*state.env_id)
                    if env is not None:
                        held = self.node.store.held(env)
                        self.apply(state, changes_from_json(held, data.flags, data.segments))
                        state.data_confirmed = time.monotonic()
                        self._offline_state(state, DataSourceState.VALID)
            await asyncio.sleep(self._offline_interval)

    def _offline_failed(self, state: RelayEnvironment, message: str) -> None:
        log.error("relay environment %s: %s", state.config.name, message)
        state.offline_error = ("file", message, time.time())
        ready = state.env_id in self.node.ready
        self._offline_state(
            state, DataSourceState.INTERRUPTED if ready else DataSourceState.INITIALIZING
        )

    def _offline_state(self, state: RelayEnvironment, new: DataSourceState) -> None:
        if new is not state.offline_state:
            state.offline_state = new
            state.offline_since = time.time()
