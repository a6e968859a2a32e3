"""Redis Streams as the shared event log for scale-out: each node's forwarder copies durable
journal records to one stream (then releases them locally), and processors on any node read it
through a consumer group, commit to the analytics store, then XACK. At-least-once delivery;
processing is idempotent by (project, environment, payload id). The local journal stays the ack
point: nothing here is on a request path."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import redis

from flagstaff_server.durable import replace_file
from flagstaff_server.ingest import record as framing
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.journal_reader import JournalReader
from flagstaff_server.ingest.processor import Consumer
from flagstaff_server.ingest.record import Record

log = logging.getLogger(__name__)

STREAM = "flagstaff:events"
GROUP = "flagstaff-processors"
FIELD = b"r"
CLAIM_IDLE_MS = 30_000
"""Entries another consumer read but did not acknowledge for this long are taken over."""


def encode_entry(record: Record) -> bytes:
    return framing.encode(record)


def decode_entry(data: bytes) -> Record:
    found = framing.scan(data)
    if len(found.records) != 1:
        raise ValueError("stream entry is not one intact journal record")
    return found.records[0]


class Forwarder:
    """Copies journal records to the stream in seq order. Its position is kept in a file written
    after each XADD batch: a crash in between re-sends a batch, which processing de-duplicates."""

    def __init__(
        self,
        journal: Journal,
        client: redis.Redis,
        position_file: Path,
        *,
        stream: str = STREAM,
        batch: int = 500,
        idle_seconds: float = 0.05,
        retry_seconds: float = 0.5,
    ) -> None:
        self.journal = journal
        self.client = client
        self.position_file = position_file
        self.stream = stream
        self.batch = batch
        self.idle_seconds = idle_seconds
        self.retry_seconds = retry_seconds
        self.position = 0
        self.connected = False
        self.counts: Counter[str] = Counter()

    async def run(self) -> None:
        self.position = await asyncio.to_thread(self._load)
        reader = JournalReader(self.journal, self.position)
        while True:
            try:
                records = await asyncio.to_thread(reader.read, max_records=self.batch)
                if not records:
                    await asyncio.sleep(self.idle_seconds)
                    continue
                await asyncio.to_thread(self._send, records)
                self.connected = True
                self.position = records[-1].seq
                await asyncio.to_thread(self._save, self.position)
                await asyncio.to_thread(self.journal.release, self.position)
                self.counts["forwarded"] += len(records)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.connected = False
                self.counts["error"] += 1
                log.warning("event forwarding to Redis failed, retrying: %s", exc)
                reader = JournalReader(self.journal, self.position)
                await asyncio.sleep(self.retry_seconds)

    def _send(self, records: list[Record]) -> None:
        pipe = self.client.pipeline(transaction=False)
        for item in records:
            pipe.xadd(self.stream, {FIELD: encode_entry(item)})
        pipe.execute()

    def _load(self) -> int:
        try:
            return int(self.position_file.read_text().strip() or 0)
        except FileNotFoundError:
            return 0

    def _save(self, position: int) -> None:
        replace_file(self.position_file, b"%d" % position)


class StreamProcessor(Consumer):
    """One consumer of the group: its own unacknowledged entries first (after a restart), then
    entries idle too long at other consumers, then new ones."""

    def __init__(
        self,
        client: redis.Redis,
        analytics: AnalyticsStore,
        *,
        consumer: str,
        stream: str = STREAM,
        group: str = GROUP,
        batch: int = 500,
        block_ms: int = 500,
        **retry: Any,
    ) -> None:
        super().__init__(analytics, **retry)
        self.client = client
        self.consumer = consumer
        self.stream = stream
        self.group = group
        self.batch = batch
        self.block_ms = block_ms

    async def _consume(self) -> None:
        await asyncio.to_thread(self._create_group)
        # the analytics store answers: without this, /status said it was down until the first
        # batch arrived (an idle node never became healthy)
        await asyncio.to_thread(self.analytics.position, self.consumer)
        self.store_ok = True
        own_pending = True
        while True:
            entries = await asyncio.to_thread(self._next, own_pending)
            if own_pending and not entries:
                own_pending = False
                continue
            if not entries:
                await self._housekeep()
                continue
            records = [decode_entry(data) for _, data in entries]
            await self._process(None, records)
            await asyncio.to_thread(self._ack, [entry_id for entry_id, _ in entries])

    def _create_group(self) -> None:
        try:
            self.client.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def _next(self, own_pending: bool) -> list[tuple[bytes, bytes]]:
        if own_pending:
            reply = self.client.xreadgroup(
                self.group, self.consumer, {self.stream: "0"}, count=self.batch
            )
            return self._entries(reply)
        claimed = self.client.xautoclaim(
            self.stream, self.group, self.consumer, CLAIM_IDLE_MS, "0-0", count=self.batch
        )
        taken = [(entry_id, fields[FIELD]) for entry_id, fields in claimed[1] if fields]
        if taken:
            return taken
        reply = self.client.xreadgroup(
            self.group, self.consumer, {self.stream: ">"}, count=self.batch, block=self.block_ms
        )
        return self._entries(reply)

    @staticmethod
    def _entries(reply: Any) -> list[tuple[bytes, bytes]]:
        entries: list[tuple[bytes, bytes]] = []
        for _stream, items in reply or ():
            for entry_id, fields in items:
                if fields and FIELD in fields:
                    entries.append((entry_id, fields[FIELD]))
        return entries

    def _ack(self, entry_ids: list[bytes]) -> None:
        self.client.xack(self.stream, self.group, *entry_ids)
        # entries every group member has acknowledged are no longer needed in the stream
        self.client.xdel(self.stream, *entry_ids)
