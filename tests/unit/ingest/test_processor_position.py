"""The processor reports a journal position only once the bytes up to it are released, so a
caller that sees `processedSeq` reach `durableSeq` in /status finds the disk budget free (before,
the position moved first and a payload sent in between got a 503 over the budget)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.processor import Processor
from journal_support import append
from support.deadlines import eventually


class WatchedJournal(Journal):
    """A journal that notes each release the processor had already reported as its position
    (a moment in which /status said "processed" while those bytes still counted)."""

    processor: Processor | None = None
    early: list[int]

    def release(self, through_seq: int) -> int:
        if self.processor is not None and self.processor.position >= through_seq:
            self.early.append(through_seq)
        return super().release(through_seq)


async def test_the_reported_position_never_runs_ahead_of_the_released_budget(
    tmp_path: Path,
) -> None:
    journal = WatchedJournal(tmp_path / "journal")
    journal.early = []
    journal.recover()
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}")
    processor = Processor(journal, store, node_id="node", batch_records=8, idle_seconds=0.01)
    journal.processor = processor
    last = await append(journal, 0, 40)
    task = asyncio.create_task(processor.run())
    try:
        await eventually(lambda: processor.position >= last, within=10, interval=0.01)
    finally:
        task.cancel()
        store.close()
        journal.close()
    assert journal.early == []
    assert journal.unreleased_bytes == 0
