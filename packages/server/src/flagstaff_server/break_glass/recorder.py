"""Recording accepted break-glass documents in the control plane's audit log once its database
answers: an actor that hands each waiting document to a blocking `AuditSink` (in a worker
thread) and retries with backoff while the database is down or read-only.

The sink is idempotent (the audit entry's id is the document's id), so every node that accepted
a document may record it and the log still holds it once.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Callable

from flagstaff_server.break_glass.state_file import AuditItem

log = logging.getLogger(__name__)

AuditSink = Callable[[AuditItem], None]
"""Blocking: records the item (or finds it recorded already); raises while it cannot."""
WAITING_LIMIT = 10_000


class AuditRecorder:
    def __init__(
        self,
        sink: AuditSink,
        *,
        on_recorded: Callable[[], None],
        retry_seconds: float = 1.0,
        retry_max_seconds: float = 30.0,
    ) -> None:
        self.sink = sink
        self.on_recorded = on_recorded
        """Called on the loop after items left `waiting` (the owner persists the change)."""
        self.retry_seconds = retry_seconds
        self.retry_max_seconds = retry_max_seconds
        self.waiting: list[AuditItem] = []
        self.counts: Counter[str] = Counter()
        self.last_error: str | None = None
        self._wake = asyncio.Event()

    def add(self, item: AuditItem) -> None:
        self.waiting.append(item)
        if len(self.waiting) > WAITING_LIMIT:
            del self.waiting[0]
            self.counts["dropped"] += 1
            log.error("break-glass audit backlog full: the oldest waiting document was dropped")
        self._wake.set()

    def wake(self) -> None:
        """Try the waiting items now (at start: those kept on disk)."""
        if self.waiting:
            self._wake.set()

    async def run(self) -> None:
        delay = self.retry_seconds
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.waiting:
                item = self.waiting[0]
                try:
                    await asyncio.to_thread(self.sink, item)
                except Exception as exc:
                    self.counts["error"] += 1
                    self.last_error = str(exc) or type(exc).__name__
                    log.info("break-glass audit entry waits for the database: %s", exc)
                    await asyncio.sleep(delay * (0.5 + 0.5 * random.random()))
                    delay = min(delay * 2, self.retry_max_seconds)
                    continue
                delay = self.retry_seconds
                self.last_error = None
                self.counts["recorded"] += 1
                if self.waiting and self.waiting[0] is item:
                    self.waiting.pop(0)
                self.on_recorded()
