"""The local processor in its own process (`processor_process`, `processor_child`): it reads only
what the node says is durable, every payload is committed once also when the process is killed
mid-way and restarted, the node reports a position only after releasing the journal up to it,
and a stop ends the process."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.analytics_tables import payloads
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.journal_reader import JournalReader
from flagstaff_server.ingest.processor_child import JournalView
from flagstaff_server.ingest.processor_process import ProcessorProcess
from flagstaff_server.ingest.processor_slots import Slot, Slots
from journal_support import append
from sqlalchemy import func, select
from support.deadlines import eventually


def processed_ids(store: AnalyticsStore) -> int:
    with store.engine.connect() as connection:
        count: int = connection.execute(select(func.count()).select_from(payloads)).scalar_one()
    return count


async def test_the_view_reads_no_further_than_the_published_durable_seq(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal", segment_bytes=1024)
    journal.recover()
    await append(journal, 0, 30)  # several segments of 1 KiB
    slots = Slots.create(tmp_path / "state")
    try:
        slots[Slot.DURABLE] = 12
        reader = JournalReader(JournalView(journal.directory, slots), 0)
        assert [record.seq for record in reader.read()] == list(range(1, 13))
        assert reader.read() == []
        slots[Slot.DURABLE] = journal.durable_seq
        assert [record.seq for record in reader.read()] == list(range(13, 31))
    finally:
        slots.close()
        journal.close()


async def test_a_killed_processor_is_restarted_and_counts_every_payload_once(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "journal", segment_bytes=4096)
    journal.recover()
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}")
    process = ProcessorProcess(
        journal,
        store,
        node_id="node",
        state_path=tmp_path / "processor.state",
        restart_seconds=0.05,
        processor={"batch_records": 5, "idle_seconds": 0.01},
    )
    task = asyncio.create_task(process.run())
    try:
        last = await append(journal, 0, 40)
        await eventually(lambda: process.position >= last, within=60, what="first batches")
        first_pid = process.pid
        assert first_pid is not None
        assert journal.unreleased_bytes == 0
        last = await append(journal, 40, 200)
        await eventually(lambda: process.position > 40, within=30, what="processing resumed")
        os.kill(first_pid, signal.SIGKILL)
        await eventually(lambda: process.restarts == 1, within=30, what="the restart")
        last = await append(journal, 240, 10)
        await eventually(lambda: process.position >= last, within=60, what="caught up")
        assert process.pid != first_pid
        assert process.store_ok
        assert journal.unreleased_bytes == 0
        assert processed_ids(store) == 250
        assert store.position("node") == last
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        store.close()
        journal.close()
    # the stop asked the process to exit, and it did
    assert process.pid is not None
    await eventually(lambda: not alive(process.pid), within=10, what="the processor exiting")


def alive(pid: int | None) -> bool:
    assert pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
