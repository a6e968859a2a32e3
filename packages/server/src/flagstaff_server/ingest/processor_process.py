"""The local processor in a process of its own (`processor_child`), supervised from the node's
event loop: the node publishes its durable seq in the shared slots, reads back the committed
position and counts, releases the journal up to that position, and restarts the process if it
exits. Acknowledgements never wait for processing, and processing no longer takes the node's GIL
(in one process its Python work delayed every ack; see docs/ingestion.md). Quacks like
`Processor` for the node's status: `position`, `store_ok`, `counts`, `quarantine_held`."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest import quarantine
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.processor_slots import COUNTED, Slot, Slots
from flagstaff_server.tasks import finish_in_thread

log = logging.getLogger(__name__)

SYNC_SECONDS = 0.02
"""How often the node publishes its durable seq and reads the processor's position."""
NICE = 10
"""The processor's CPU priority below the node's: under load the scheduler gives the acks (and
the SDKs' streams) the CPU first and processing the rest; the journal holds the difference, up
to the disk budget, and is processed once the load eases. Processing is never starved outright
(a nice-10 process still gets about a tenth of a contended CPU)."""
STOP_SECONDS = 30.0
"""How long a stopping node waits for the processor to finish its batch before killing it (a
kill loses nothing: the batch's transaction did not commit, and is redone from the position)."""


class ProcessorProcess:
    def __init__(
        self,
        journal: Journal,
        analytics: AnalyticsStore,
        *,
        node_id: str,
        state_path: Path,
        log_level: str = "WARNING",
        restart_seconds: float = 0.5,
        processor: dict[str, Any] | None = None,
    ) -> None:
        self.journal = journal
        self.analytics = analytics
        self.node_id = node_id
        self.state_path = state_path
        self.log_level = log_level
        self.restart_seconds = restart_seconds
        self.processor_options = processor or {}
        self.position = -1
        """The committed journal seq whose segments this node has released (-1 until known)."""
        self.store_ok = False
        self.quarantine_held: int | None = None
        self.counts: Counter[str] = Counter()
        self.restarts = 0
        self.pid: int | None = None
        self._earlier: Counter[str] = Counter()
        """Counts of the processes that exited (each one counts from 0)."""
        self._slots: Slots | None = None

    async def run(self) -> None:
        slots = self._slots = await asyncio.to_thread(Slots.create, self.state_path)
        try:
            await self._wait_for_work()
            while True:
                slots.reset()
                slots[Slot.STOP] = 0
                self._sync(slots)
                process = await asyncio.to_thread(self._spawn)
                self.pid = process.pid
                try:
                    while process.poll() is None:
                        await self._follow(slots)
                        await asyncio.sleep(SYNC_SECONDS)
                except asyncio.CancelledError:
                    await self._stop(process, slots)
                    raise
                await self._follow(slots)
                self._exited(slots)
                self.restarts += 1
                self.store_ok = False
                log.warning(
                    "event processor process exited (%s); restarting in %.1fs",
                    process.returncode,
                    self.restart_seconds,
                )
                await asyncio.sleep(self.restart_seconds)
        finally:
            slots.close()
            self._slots = None

    async def _wait_for_work(self) -> None:
        """Read the committed position here (migrating the schema first, so that the processor
        and this node's insights API never race to create it), release up to it, and wait until
        something is durable past it: a node nobody sends events to never starts the process.
        With the store down, the process is started at once; it retries with backoff."""
        try:
            position = await finish_in_thread(self.analytics.position, self.node_id)
            await finish_in_thread(self.journal.release, position)
            self.position = position
            self.quarantine_held = await finish_in_thread(quarantine.count, self.analytics)
            self.store_ok = True
        except StoreUnavailable:
            return
        while True:  # polled: the journal has no event for "something became durable"
            if self.journal.durable_seq > self.position:
                return
            await asyncio.sleep(SYNC_SECONDS)

    def _spawn(self) -> subprocess.Popen[bytes]:
        config = {
            "slots": str(self.state_path),
            "journal": str(self.journal.directory),
            "analytics_url": self.analytics.url,
            "node_id": self.node_id,
            "nice": NICE,
            "log_level": self.log_level,
            "processor": self.processor_options,
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "flagstaff_server.ingest.processor_child"],
            stdin=subprocess.PIPE,
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(config).encode())
        process.stdin.close()
        return process

    def _sync(self, slots: Slots) -> None:
        slots[Slot.DURABLE] = self.journal.durable_seq
        for slot, name in COUNTED.items():
            self.counts[name] = self._earlier[name] + slots[slot]
        held = slots[Slot.QUARANTINE_HELD]
        if held >= 0:
            self.quarantine_held = held
        store = slots[Slot.STORE_OK]
        if store >= 0:  # -1: a process starting has not tried the store yet
            self.store_ok = bool(store)

    async def _follow(self, slots: Slots) -> None:
        """Publish the durable seq, take the counts, and release up to the committed position
        before reporting it (whoever sees processedSeq reach durableSeq finds the budget free)."""
        self._sync(slots)
        position = slots[Slot.POSITION]
        if position > self.position:
            await finish_in_thread(self.journal.release, position)
            self.position = position

    def _exited(self, slots: Slots) -> None:
        for slot, name in COUNTED.items():
            self._earlier[name] += slots[slot]

    async def _stop(self, process: subprocess.Popen[bytes], slots: Slots) -> None:
        slots[Slot.STOP] = 1
        try:
            await asyncio.to_thread(process.wait, STOP_SECONDS)
        except subprocess.TimeoutExpired:
            log.warning("event processor process did not stop in %.0fs; killing it", STOP_SECONDS)
            process.kill()
            await asyncio.to_thread(process.wait)
        self._sync(slots)
