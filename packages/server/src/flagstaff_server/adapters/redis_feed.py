"""The Redis Streams change feed for scale-out: committing processes copy outbox changes into one
stream (entry id = seq), subscribers read it and fill any hole from the outbox. Never the source
of truth: losing the stream costs latency, never a change. Reasoning in docs/storage.md."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson
import redis
import redis.asyncio
from redis.exceptions import RedisError, ResponseError
from redis.typing import EncodableT, FieldT

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.outbox import (
    fetch_changes,
    fetch_epochs,
    fetch_latest_seq,
    read_changes,
)
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.services.ports import Change, ChangeFeed, ChangeKind, EpochRecord, Store

log = logging.getLogger(__name__)

_STALE_ID = "equal or smaller than the target stream top item"


class RedisChangeFeed:
    def __init__(
        self,
        store: Store,
        url: str,
        *,
        stream: str = "flagstaff:changes",
        max_length: int = 100_000,
        batch_size: int = 500,
        max_backfill: int = 1000,
        idle_check: float = 2.0,
        retry_delay: float = 1.0,
    ) -> None:
        """`max_length`: entries kept (approximately); older ones come from the outbox.
        `max_backfill`: how many missing changes one `publish` copies into the stream.
        `idle_check`: how often an idle subscriber compares its position with the outbox."""
        self._store = store
        self._url = url
        self._stream = stream
        self._max_length = max_length
        self._batch_size = batch_size
        self._max_backfill = max_backfill
        self._idle_check = idle_check
        self._retry_delay = retry_delay
        self._client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._publish_lock = threading.Lock()
        self.publish_failures = 0
        """Announcements that did not reach Redis (subscribers recovered them from the outbox)."""
        self.outbox_reads = 0
        """Times a subscriber had to read the outbox because the stream lacked a change."""
        self.foreign_entries = 0
        """Stream entries skipped as written from a history the database no longer has."""
        self._outbox_down = False

    @property
    def stream(self) -> str:
        return self._stream

    @property
    def poll_seconds(self) -> float:
        """How often an idle subscriber reads the outbox (`idle_check`)."""
        return self._idle_check

    def publish(self, seq: int) -> None:
        """Copy every committed change up to `seq` that the stream lacks, oldest first. Entry ids
        are seqs, so Redis itself refuses duplicates and reordering from racing publishers."""
        try:
            with self._publish_lock:
                self._copy_into_stream(seq)
        except (RedisError, StoreUnavailable) as exc:
            self.publish_failures += 1
            log.warning("could not announce change %d on Redis: %s", seq, exc)

    def _copy_into_stream(self, seq: int) -> None:
        position = max(self._stream_top(), seq - self._max_backfill)
        while position < seq:
            changes = read_changes(self._store, position, min(self._batch_size, seq - position))
            if not changes:
                return
            pipe = self._client.pipeline(transaction=False)
            for change in changes:
                pipe.xadd(
                    self._stream,
                    encode_entry(change),
                    id=f"{change.seq}-0",
                    maxlen=self._max_length,
                    approximate=True,
                )
            for result in pipe.execute(raise_on_error=False):
                # another process announced it first: it is in the stream, as wanted
                if isinstance(result, ResponseError) and _STALE_ID not in str(result):
                    raise result
            position = changes[-1].seq

    def _stream_top(self) -> int:
        newest = cast(list[Any], self._client.xrevrange(self._stream, "+", "-", count=1))
        return _seq_of(newest[0][0]) if newest else 0

    async def subscribe(self, after_seq: int) -> AsyncGenerator[Change, None]:
        # a blocked XREAD answers within idle_check; silence well beyond that is a hung Redis
        client = redis.asyncio.Redis.from_url(
            self._url, socket_connect_timeout=5, socket_timeout=self._idle_check + 5
        )
        position = after_seq  # the last seq yielded
        # where the stream is read from: past `position` by the entries skipped as foreign
        cursor = after_seq
        epochs = await self._epochs()
        try:
            while True:
                try:
                    response = await cast(
                        Any,
                        client.xread(
                            {self._stream: f"{cursor}-0"},
                            count=self._batch_size,
                            block=max(int(self._idle_check * 1000), 1),
                        ),
                    )
                except RedisError as exc:
                    log.warning("change feed cannot read Redis, using the outbox: %s", exc)
                    backlog = await self._backlog(position, self._batch_size)
                    for change in backlog:
                        yield change
                        position = cursor = change.seq
                    if not backlog:
                        await asyncio.sleep(self._retry_delay)
                    continue
                entries: list[Any] = response[0][1] if response else []
                if not entries:
                    # idle: a commit whose announcement failed is still in the outbox, and an
                    # epoch may have begun (it tells which entries are from a lost history)
                    epochs = await self._epochs() or epochs
                    for change in await self._backlog(position, self._batch_size):
                        yield change
                        position = change.seq
                    cursor = max(cursor, position)
                    continue
                skipped = False
                for entry_id, fields in entries:
                    seq = _seq_of(entry_id)
                    if seq <= position:
                        cursor = max(cursor, seq)
                        continue
                    entry = self._decoded(seq, fields)
                    if entry is not None:
                        verdict = belongs(epochs, entry)
                        if verdict is None:
                            epochs = await self._epochs() or epochs
                            verdict = belongs(epochs, entry) is True
                        if not verdict:
                            # written from a history the database no longer has (a restore,
                            # a failed-over primary): the outbox holds what replaced it
                            self.foreign_entries += 1
                            cursor, skipped = seq, True
                            continue
                        if seq == position + 1:
                            yield entry
                            position = cursor = seq
                            continue
                    # A hole before the entry (trimmed, lost, never announced, or an epoch's
                    # seq gap) or an unreadable entry: the outbox decides, up to the entry.
                    reached = False
                    while not reached:
                        backlog = await self._backlog(position, self._batch_size)
                        for found in backlog:
                            if found.seq > seq:
                                reached = True  # the outbox has no such change: skip it
                                break
                            yield found
                            position = found.seq
                            reached = found.seq == seq
                            if reached:
                                break
                        if len(backlog) < self._batch_size:
                            break
                    if not reached:
                        # the outbox cannot vouch for the entry now; never skip past it
                        cursor = position
                        await asyncio.sleep(self._retry_delay)
                        break
                    cursor = max(position, seq)
                else:
                    if skipped:
                        # what replaced the skipped entries (an epoch's marker first) may be
                        # in the outbox only: it was written without announcing it
                        for change in await self._backlog(position, self._batch_size):
                            yield change
                            position = change.seq
                        cursor = max(cursor, position)
        finally:
            await client.aclose()

    def _decoded(self, seq: int, fields: Mapping[bytes, bytes]) -> Change | None:
        try:
            return decode_entry(seq, fields)
        except (KeyError, ValueError) as exc:
            # not an entry we wrote: the outbox has the real change
            log.warning("unreadable entry %d on %s: %r", seq, self._stream, exc)
            return None

    async def _epochs(self) -> list[EpochRecord]:
        """The database's epochs; empty when the store cannot answer (entries are then taken
        as they are)."""
        try:
            return await fetch_epochs(self._store)
        except StoreUnavailable:
            return []

    async def _backlog(self, position: int, limit: int) -> list[Change]:
        try:
            changes = await fetch_changes(self._store, position, limit)
        except StoreUnavailable as exc:
            # logged once per outage: idle subscribers try every idle_check
            if not self._outbox_down:
                log.warning("change feed cannot read the outbox: %s", exc)
            self._outbox_down = True
            return []
        if self._outbox_down:
            log.info("change feed reads the outbox again")
            self._outbox_down = False
        if changes:
            self.outbox_reads += 1
        return changes

    async def latest_seq(self) -> int:
        try:
            return await fetch_latest_seq(self._store)
        except StoreUnavailable:
            try:
                return await asyncio.to_thread(self._stream_top)
            except RedisError as exc:
                raise StoreUnavailable(f"neither the outbox nor Redis answers: {exc}") from exc

    async def ping(self) -> None:
        """Raises StoreUnavailable when Redis does not answer within a second: the stream is
        down, although subscribers may still get every change from the outbox (slower)."""
        # a client per call: the status page calls this from whatever loop serves it
        client = redis.asyncio.Redis.from_url(self._url, socket_connect_timeout=1, socket_timeout=1)
        try:
            await client.ping()
        except RedisError as exc:
            raise StoreUnavailable(f"Redis does not answer: {exc}") from exc
        finally:
            await client.aclose()

    async def aclose(self) -> None:
        await asyncio.to_thread(self._client.close)


def _seq_of(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.partition("-")[0])


def belongs(epochs: Sequence[EpochRecord], change: Change) -> bool | None:
    """Whether `change` is of the history `epochs` (oldest first) describe: its seq lies inside
    its epoch. None when its epoch is newer than all of them; True when there are none."""
    if not epochs:
        return True
    for index, record in enumerate(epochs):
        if record.epoch == change.epoch:
            end = epochs[index + 1].started_after_seq if index + 1 < len(epochs) else None
            return change.seq > record.started_after_seq and (end is None or change.seq <= end)
    return None if change.epoch > epochs[-1].epoch else False


def encode_entry(change: Change) -> dict[FieldT, EncodableT]:
    return {
        "epoch": change.epoch,
        "project": change.project,
        "environment": change.environment,
        "kind": change.kind,
        "key": change.key,
        "version": change.version,
        "at": to_millis(change.at),
        "item": orjson.dumps(change.item).decode(),
    }


def decode_entry(seq: int, fields: Mapping[bytes, bytes]) -> Change:
    return Change(
        seq=seq,
        project=fields[b"project"].decode(),
        environment=fields[b"environment"].decode(),
        kind=cast(ChangeKind, fields[b"kind"].decode()),
        key=fields[b"key"].decode(),
        version=int(fields[b"version"]),
        item=orjson.loads(fields[b"item"]),
        at=from_millis(int(fields[b"at"])),
        epoch=int(fields.get(b"epoch", b"1")),
    )


if TYPE_CHECKING:
    _conforms: type[ChangeFeed] = RedisChangeFeed
