"""The processor actor: reads durable journal records after the committed position, commits each
batch to the analytics store (counts, payload ids and position in one transaction), then releases
journal segments. At-least-once from the journal, exactly-once in effect by payload id. A batch
that fails for any reason but the store being unavailable is bisected and the payloads that fail
on their own are quarantined (`ingest.quarantine`), so processing never stops behind them."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest import quarantine
from flagstaff_server.ingest.analytics import AnalyticsStore, Committed
from flagstaff_server.ingest.journal_reader import ConsumedLog, JournalReader
from flagstaff_server.ingest.record import Record
from flagstaff_server.tasks import finish_in_thread

log = logging.getLogger(__name__)

QUARANTINE_COUNT_SECONDS = 5.0


class Consumer:
    """What both processors share: a pass that runs until something fails (`_consume`), retried
    with doubling delays while the store (or the stream) is down, and the sweep of processed
    payload ids past their retention window."""

    def __init__(
        self,
        analytics: AnalyticsStore,
        *,
        retry_seconds: float = 0.5,
        retry_max_seconds: float = 10.0,
        payload_retention_ms: int = 24 * 3_600_000,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.analytics = analytics
        self.retry_seconds = retry_seconds
        self.retry_max_seconds = retry_max_seconds
        self.payload_retention_ms = payload_retention_ms
        self.wall = wall
        self.counts: Counter[str] = Counter()
        self.store_ok = False
        self.quarantine_held: int | None = None
        """Payloads in the quarantine (every environment) as last read: at start, after each
        quarantining, and with the housekeeping (at most once a minute)."""
        self._delay = retry_seconds
        self._next_forget = 0.0
        self._next_count = 0.0

    async def run(self) -> None:
        while True:
            try:
                await self._consume()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.store_ok = False
                self.counts["error"] += 1
                log.warning("event processing failed, retrying in %.1fs: %s", self._delay, exc)
                await asyncio.sleep(self._delay)
                self._delay = min(self._delay * 2, self.retry_max_seconds)

    async def _consume(self) -> None:
        raise NotImplementedError

    def _committed(self, committed: Committed) -> None:
        self.store_ok = True
        self._delay = self.retry_seconds
        self.counts["payloads"] += committed.payloads
        self.counts["duplicates"] += committed.duplicates

    async def _process(self, node: str | None, records: list[Record]) -> None:
        """Commit a batch (for a local journal with `node`'s position). A batch that fails for a
        reason other than `StoreUnavailable` is split in halves, each committed on its own, down
        to single payloads: every one that does not fail is counted once, each one that fails
        alone is quarantined. `StoreUnavailable` propagates from any depth: the loop retries from
        the committed position, and what was committed before is skipped by payload id."""
        now_ms = int(self.wall() * 1000)
        try:
            committed = await finish_in_thread(self.analytics.commit, node, records, now_ms=now_ms)
        except StoreUnavailable:
            raise
        except Exception as exc:
            if len(records) > 1:
                middle = len(records) // 2
                self.counts["bisections"] += 1
                await self._process(node, records[:middle])
                await self._process(node, records[middle:])
                return
            await self._quarantine(node, records[0], exc, now_ms)
            return
        self._committed(committed)

    async def _quarantine(
        self, node: str | None, record: Record, exc: Exception, now_ms: int
    ) -> None:
        error = quarantine.error_text(exc)
        added = await finish_in_thread(
            quarantine.keep, self.analytics, node, record, error=error, now_ms=now_ms
        )
        log.error(
            "event payload %s (%s/%s, seq %d) fails processing on its own; quarantined: %s",
            record.payload_id,
            record.project,
            record.environment,
            record.seq,
            error,
        )
        self.store_ok = True
        self.counts["quarantined" if added else "duplicates"] += 1
        self.quarantine_held = await finish_in_thread(quarantine.count, self.analytics)

    async def _housekeep(self) -> None:
        """While idle: read how many payloads the quarantine holds (at most every 5 s: an
        operator's reprocessing, maybe on another node, empties it without telling us), and drop
        processed payload ids past the retention window (at most once a minute)."""
        now = self.wall()
        if now >= self._next_count:
            self._next_count = now + QUARANTINE_COUNT_SECONDS
            self.quarantine_held = await finish_in_thread(quarantine.count, self.analytics)
        if now < self._next_forget:
            return
        self._next_forget = now + 60
        before = int(now * 1000) - self.payload_retention_ms
        self.counts["ids_forgotten"] += await finish_in_thread(
            self.analytics.forget_payloads, before
        )


class Processor(Consumer):
    """The local journal's consumer: commits each batch with the node's position."""

    def __init__(
        self,
        journal: ConsumedLog,
        analytics: AnalyticsStore,
        *,
        node_id: str,
        batch_records: int = 500,
        idle_seconds: float = 0.05,
        **retry: Any,
    ) -> None:
        super().__init__(analytics, **retry)
        self.journal = journal
        self.node_id = node_id
        self.batch_records = batch_records
        self.idle_seconds = idle_seconds
        self.position = -1
        """The committed journal seq (-1 until read from the store)."""

    async def _consume(self) -> None:
        position = await finish_in_thread(self.analytics.position, self.node_id)
        self.store_ok = True
        # A position is reported only once the bytes up to it are released: whoever sees
        # processedSeq reach durableSeq in /status finds the disk budget free.
        await finish_in_thread(self.journal.release, position)
        self.position = position
        reader = JournalReader(self.journal, position)
        while True:
            records = await finish_in_thread(reader.read, max_records=self.batch_records)
            if not records:
                await self._housekeep()
                await asyncio.sleep(self.idle_seconds)
                continue
            await self._process(self.node_id, records)
            await finish_in_thread(self.journal.release, records[-1].seq)
            self.position = records[-1].seq
