"""An ingestion node: journal, recent payload ids, credential lookup, processor and the ASGI app,
started and stopped together. A payload is acknowledged only after its journal append is fsync'd;
the processor and the analytics store may be down meanwhile (up to the disk budget)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import redis

from flagstaff_server.durable import replace_file
from flagstaff_server.ingest import metrics
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.asgi import IngestApp
from flagstaff_server.ingest.config import IngestConfig
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.keyring import Keyring
from flagstaff_server.ingest.processor import Processor
from flagstaff_server.ingest.processor_process import ProcessorProcess
from flagstaff_server.ingest.recent import RecentIds, RecentKey
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.stream import Forwarder, StreamProcessor
from flagstaff_server.ingest.tally import tally
from flagstaff_server.tasks import cancel_and_wait

if TYPE_CHECKING:
    from flagstaff_server.delivery.node import DeliveryNode

log = logging.getLogger(__name__)

LOOP_SWITCH_SECONDS = 0.002
"""The interpreter's thread switch interval while a processor runs in this process. The event
loop gives up the GIL on every poll; with the default 5 ms it may then wait that long behind the
processor thread's Python work before it can acknowledge anything. A shorter one let acks
through sooner in the all-in-one bench; 0.5 ms switched so often that it was slower again."""

GENERATED_ID_PREFIX = "flagstaff-"
"""Starts the id given to a payload sent without one. Such ids are never remembered for
de-duplication: nobody can send them again."""


def generated_id() -> str:
    """A payload id for a payload sent without one; never equal to an SDK's UUID."""
    return f"{GENERATED_ID_PREFIX}{uuid.uuid4().hex}"


class IngestNode:
    def __init__(
        self,
        config: IngestConfig,
        *,
        delivery: DeliveryNode,
        analytics: AnalyticsStore | None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.wall = wall
        self.analytics = analytics
        self.journal = Journal(
            config.data_dir / "journal",
            segment_bytes=config.segment_size,
            mark_bytes=config.mark_spacing,
        )
        self.recent = RecentIds(window_ms=config.dedupe_window_ms, capacity=config.dedupe_capacity)
        self.keyring = Keyring(delivery, wall=wall)
        delivery.metric_sources.append(lambda: metrics.render(self.status()))
        self.counts: Counter[str] = Counter()
        self.node_id = ""
        self.processor: Processor | StreamProcessor | ProcessorProcess | None = None
        self.forwarder: Forwarder | None = None
        self.recovery_seconds = 0.0
        self._tasks: list[asyncio.Task[None]] = []
        self._switch_interval: float | None = None
        """The interval before start shortened it, restored on stop."""
        self.app = IngestApp(self)

    async def start(self) -> None:
        started = time.monotonic()
        self.node_id = await asyncio.to_thread(self._node_id)
        recovery = await asyncio.to_thread(self.journal.recover, self._remember)
        self.recovery_seconds = time.monotonic() - started
        log.info(
            "ingest journal recovered: %d records scanned in the tail (%d sealed segments before "
            "it, checked when read), %d torn bytes dropped, next seq %d (%.2fs)",
            recovery.records,
            recovery.unscanned_segments,
            recovery.torn_bytes,
            recovery.next_seq,
            self.recovery_seconds,
        )
        if self.config.redis_url is not None:
            client = redis.Redis.from_url(
                self.config.redis_url, socket_timeout=10, socket_connect_timeout=3
            )
            self.forwarder = Forwarder(
                self.journal, client, self.config.data_dir / "forwarded-position"
            )
            self._tasks.append(asyncio.create_task(self.forwarder.run(), name="ingest-forward"))
            if self.analytics is not None and self.config.process:
                self.processor = StreamProcessor(client, self.analytics, consumer=self.node_id)
        elif self.analytics is not None and self.config.process:
            # a store given its own tally (a test's seam) is processed here, where it lives
            if self.config.processor_process and self.analytics.tally is tally:
                self.processor = ProcessorProcess(
                    self.journal,
                    self.analytics,
                    node_id=self.node_id,
                    state_path=self.config.data_dir / "processor.state",
                    log_level=logging.getLevelName(logging.getLogger().getEffectiveLevel()),
                )
            else:
                self.processor = Processor(self.journal, self.analytics, node_id=self.node_id)
        if self.processor is not None:
            if not isinstance(self.processor, ProcessorProcess):
                # processing in a thread here: its Python work competes with the loop for the GIL
                self._switch_interval = sys.getswitchinterval()
                sys.setswitchinterval(min(self._switch_interval, LOOP_SWITCH_SECONDS))
            self._tasks.append(asyncio.create_task(self.processor.run(), name="ingest-processor"))

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        await asyncio.to_thread(self.journal.close)
        if self.analytics is not None:
            self.analytics.close()

    def _node_id(self) -> str:
        path = self.config.data_dir / "node-id"
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            pass
        value = uuid.uuid4().hex
        replace_file(path, value.encode())
        return value

    def _remember(self, record: Record) -> None:
        if record.payload_id and not record.payload_id.startswith(GENERATED_ID_PREFIX):
            key = (record.project, record.environment, record.payload_id)
            self.recent.remember(key, record.received_ms)

    def over_budget(self) -> bool:
        return self.journal.unreleased_bytes > self.config.disk_budget_bytes

    def submit(
        self,
        *,
        kind: Kind,
        project: str,
        environment: str,
        payload_id: str | None,
        payload: bytes,
    ) -> asyncio.Future[object] | None:
        """Start making the payload durable, with no task of its own in the common case. None
        for a repeat of a payload already acknowledged (answer at once); otherwise a future that
        completes once the payload is durable, or holds the OSError of a failed write."""
        now_ms = int(self.wall() * 1000)
        if payload_id is None:
            return self._append(None, now_ms, kind, project, environment, generated_id(), payload)
        key = (project, environment, payload_id)
        known = self.recent.find(key, now_ms)
        if known is None:
            self.counts["duplicate"] += 1
            return None
        if known is False:
            return self._append(key, now_ms, kind, project, environment, payload_id, payload)
        # a repeat of a payload whose append is in flight: durable with that append, or
        # appended anew if that one fails
        return asyncio.ensure_future(
            self._after(
                known,
                kind=kind,
                project=project,
                environment=environment,
                payload_id=payload_id,
                payload=payload,
            )
        )

    async def _after(self, in_flight: asyncio.Future[int], **payload: Any) -> None:
        with contextlib.suppress(OSError):
            await asyncio.shield(in_flight)
        durable = self.submit(**payload)
        if durable is not None:
            await durable

    def _append(
        self,
        key: RecentKey | None,
        now_ms: int,
        kind: Kind,
        project: str,
        environment: str,
        payload_id: str,
        payload: bytes,
    ) -> asyncio.Future[object]:
        durable = self.journal.submit(
            kind=kind,
            project=project,
            environment=environment,
            payload_id=payload_id,
            payload=payload,
            received_ms=now_ms,
        )
        if key is not None:
            # the journal's own future marks the id as in flight: a repeat waits for it
            self.recent.begin(key, now_ms, durable)
        # registered before any caller's callback, so the id is settled before anyone wakes
        durable.add_done_callback(partial(self._settle, key))
        return cast("asyncio.Future[object]", durable)

    def _settle(self, key: RecentKey | None, durable: asyncio.Future[int]) -> None:
        ok = not durable.cancelled() and durable.exception() is None
        if key is not None:
            self.recent.settle(key, ok=ok)
        if ok:
            self.counts["accepted"] += 1

    def status(self) -> dict[str, Any]:
        processor = self.processor
        local = processor if isinstance(processor, Processor | ProcessorProcess) else None
        consumed = local.position if local is not None else None
        if self.forwarder is not None:
            consumed = self.forwarder.position
        backlog = None if consumed is None else max(0, self.journal.durable_seq - consumed)
        store = None if processor is None else ("ok" if processor.store_ok else "down")
        body: dict[str, Any] = {
            "status": "ok" if store != "down" else "degraded",
            "nodeId": self.node_id,
            "journalBytes": self.journal.size_bytes,
            "unprocessedBytes": self.journal.unreleased_bytes,
            "durableSeq": self.journal.durable_seq,
            "processedSeq": local.position if local is not None else None,
            "backlog": backlog,
            "analyticsStore": store,
            "accepted": self.counts["accepted"],
            "duplicates": self.counts["duplicate"],
            "overBudget": self.counts["over_budget"],
            "recoverySeconds": round(self.recovery_seconds, 3),
        }
        if self.forwarder is not None:
            body["forwardedSeq"] = self.forwarder.position
            body["redis"] = "ok" if self.forwarder.connected else "down"
        if processor is not None:
            body["processed"] = processor.counts["payloads"]
            body["duplicatesProcessed"] = processor.counts["duplicates"]
            body["quarantined"] = processor.counts["quarantined"]
            body["quarantineHeld"] = processor.quarantine_held
        return body
