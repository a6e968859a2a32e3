"""An environment's data written through to Redis in LaunchDarkly's persistent-store layout
(`{prefix}:features` and `{prefix}:segments` hashes of item JSON, tombstones included, and the
`{prefix}:$inited` marker), so LaunchDarkly SDKs in daemon mode read what the relay serves.

An actor: one task owns the Redis connection and writes in change order. It repopulates the whole
data set after any failed write, after reconnecting, and whenever `$inited` is found missing
(Redis restarted empty or was flushed), checked every `check_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Callable

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.relay.reconcile import ItemChange

log = logging.getLogger(__name__)

INITED = "$inited"


def tombstone(key: str, version: int) -> bytes:
    return orjson.dumps({"key": key, "version": version, "deleted": True})


class RedisDaemonStore:
    def __init__(
        self,
        url: str,
        prefix: str,
        snapshot: Callable[[], Snapshot | None],
        *,
        check_seconds: float = 5.0,
        retry_seconds: float = 1.0,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.snapshot = snapshot
        """The environment's current snapshot (None until it is complete)."""
        self.check_seconds = check_seconds
        self.retry_seconds = retry_seconds
        self.counts: Counter[str] = Counter()
        self.available = False
        self.last_error: str | None = None
        self.since = 0.0
        self._pending: list[ItemChange] = []
        self._full = True
        self._wake = asyncio.Event()

    @property
    def features(self) -> str:
        return f"{self.prefix}:features"

    @property
    def segments(self) -> str:
        return f"{self.prefix}:segments"

    @property
    def inited(self) -> str:
        return f"{self.prefix}:{INITED}"

    def changed(self, changes: list[ItemChange]) -> None:
        """Changes just applied to the snapshot (on the loop): write them through."""
        if not self._full:
            self._pending.extend(changes)
        self._wake.set()

    def repopulate(self) -> None:
        """Write the whole data set on the next turn (a new snapshot, or a check found it gone)."""
        self._full = True
        self._pending = []
        self._wake.set()

    async def run(self) -> None:
        client = aioredis.Redis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5)
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.check_seconds)
                self._wake.clear()
                try:
                    await self._turn(client)
                    self.available = True
                except RedisError as exc:
                    self.counts["error"] += 1
                    self.available = False
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    log.warning("Redis store %s unavailable: %s", self.prefix, exc)
                    # what failed may be partly written: rewrite everything once Redis answers
                    self.repopulate()
                    await asyncio.sleep(self.retry_seconds)
        finally:
            await client.aclose()

    async def _turn(self, client: aioredis.Redis) -> None:
        snapshot = self.snapshot()
        if snapshot is None:
            return
        if not self._full and not self._pending and not await client.exists(self.inited):
            self.counts["lost"] += 1
            log.warning("Redis store %s lost its data; repopulating", self.prefix)
            self._full = True
        if self._full:
            self._full = False
            self._pending = []
            await self._populate(client, snapshot)
            return
        changes, self._pending = self._pending, []
        if changes:
            await self._write(client, snapshot, changes)

    async def _populate(self, client: aioredis.Redis, snapshot: Snapshot) -> None:
        features = {key: item.encoded for key, item in snapshot.flags.items()}
        segments = {key: item.encoded for key, item in snapshot.segments.items()}
        for (kind, key), version in snapshot.tombstones.items():
            (features if kind == "flag" else segments)[key] = tombstone(key, version)
        async with client.pipeline(transaction=True) as pipe:
            pipe.delete(self.features, self.segments)
            if features:
                pipe.hset(self.features, mapping=features)  # type: ignore[arg-type]
            if segments:
                pipe.hset(self.segments, mapping=segments)  # type: ignore[arg-type]
            pipe.set(self.inited, b"")
            await pipe.execute()
        self.counts["populate"] += 1

    async def _write(
        self, client: aioredis.Redis, snapshot: Snapshot, changes: list[ItemChange]
    ) -> None:
        """Write the changed items as the snapshot holds them now (a change delivery dropped as
        stale or invalid is not written); a missing `$inited` turns into a full rewrite."""
        async with client.pipeline(transaction=True) as pipe:
            pipe.exists(self.inited)
            for change in changes:
                kind, key = change.kind, change.key
                name = self.features if kind == "flag" else self.segments
                item = snapshot.items(kind).get(key)
                if item is not None:
                    pipe.hset(name, key, item.encoded)
                elif (deleted := snapshot.tombstones.get((kind, key))) is not None:
                    pipe.hset(name, key, tombstone(key, deleted))
            results = await pipe.execute()
        self.counts["write"] += len(changes)
        if not results[0]:
            self.counts["lost"] += 1
            log.warning("Redis store %s lost its data; repopulating", self.prefix)
            await self._populate(client, self.snapshot() or snapshot)
