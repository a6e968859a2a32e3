"""A batch that fails for a reason other than the store being down: the processor bisects it,
quarantines each payload that fails on its own (kept with its error, exportable) and goes on;
every other payload is counted exactly once. A store outage is retried and quarantines nothing.
An operator's reprocessing counts a payload that now succeeds once and keeps one that still fails.
The failure comes from a tally handed to the store (its seam), wrapping the real one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest import quarantine
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.payload_values import HOUR_MS
from flagstaff_server.ingest.processor import Processor
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.ingest.tally import Tally, tally
from support.deadlines import eventually

HOUR = 1_800_000_000_000 - 1_800_000_000_000 % HOUR_MS
POISON = "poison-pill"


@dataclass
class Faults:
    """What the tally handed to the store does beside the real one."""

    poison: bool = True
    """Raise for any batch holding a payload with a custom event named POISON."""
    outages: int = 0
    """Raise StoreUnavailable for this many more batches (the store down mid-commit)."""

    def tally(self, records: Iterable[Record]) -> Tally:
        batch = list(records)
        if self.outages > 0:
            self.outages -= 1
            raise StoreUnavailable("analytics store unavailable: injected outage")
        if self.poison and any(POISON.encode() in record.payload for record in batch):
            raise ValueError("this tally cannot take a poison pill")
        return tally(batch)


def events(index: int, *, poison: bool = False) -> bytes:
    """`index % 4 + 1` evaluations of flag `f` (variation 0), and a poison pill if asked."""
    counter = {"variation": 0, "count": index % 4 + 1}
    body: list[dict[str, object]] = [
        {"kind": "summary", "endDate": HOUR, "features": {"f": {"counters": [counter]}}}
    ]
    if poison:
        body.append({"kind": "custom", "key": POISON, "creationDate": HOUR})
    return orjson.dumps(body)


@dataclass
class Rig:
    journal: Journal
    store: AnalyticsStore
    faults: Faults
    processor: Processor

    async def append(self, index: int, *, poison: bool = False) -> int:
        return await self.journal.submit(
            kind=Kind.ANALYTICS,
            project="shop",
            environment="production",
            payload_id=f"id-{index}",
            payload=events(index, poison=poison),
            received_ms=HOUR,
        )

    def total(self) -> int:
        series = self.store.evaluation_series(
            "shop", "production", "f", start_ms=HOUR, end_ms=HOUR + 1
        )
        return sum(count for _, _, count in series)


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    journal = Journal(tmp_path / "journal")
    journal.recover()
    faults = Faults()
    store = AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}", tally=faults.tally)
    processor = Processor(
        journal,
        store,
        node_id="node",
        batch_records=64,
        idle_seconds=0.01,
        retry_seconds=0.01,
        retry_max_seconds=0.05,
    )
    try:
        yield Rig(journal, store, faults, processor)
    finally:
        store.close()
        journal.close()


async def processed_through(rig: Rig, seq: int) -> None:
    await eventually(lambda: rig.processor.position >= seq, within=10, interval=0.01)


def expected(indexes: Iterable[int]) -> int:
    return sum(index % 4 + 1 for index in indexes)


async def test_a_poison_payload_is_bisected_out_and_the_payloads_around_it_count_once(
    rig: Rig,
) -> None:
    poisoned = {7, 40, 41}
    last = 0
    for index in range(100):
        last = await rig.append(index, poison=index in poisoned)
    task = asyncio.create_task(rig.processor.run())
    try:
        await processed_through(rig, last)
    finally:
        task.cancel()
    assert rig.total() == expected(set(range(100)) - poisoned)
    assert rig.processor.counts["quarantined"] == 3
    assert rig.processor.counts["payloads"] == 97
    assert rig.processor.quarantine_held == 3
    assert rig.store.position("node") == last
    held = quarantine.listing(rig.store, "shop", "production", limit=10)
    assert [item["payloadId"] for item in held] == ["id-7", "id-40", "id-41"]
    assert all("ValueError: this tally cannot take a poison pill" in i["error"] for i in held)
    exported = [
        orjson.loads(line)
        for line in b"".join(quarantine.export(rig.store, "shop", "production")).splitlines()
    ]
    assert [orjson.loads(item["payload"]) for item in exported] == [
        orjson.loads(events(index, poison=True)) for index in (7, 40, 41)
    ]

    # a restart reads from the committed position: nothing is counted or quarantined twice
    again = Processor(rig.journal, rig.store, node_id="node", idle_seconds=0.01)
    task = asyncio.create_task(again.run())
    try:
        await eventually(lambda: again.position == last, within=10, interval=0.01)
    finally:
        task.cancel()
    assert rig.total() == expected(set(range(100)) - poisoned)
    assert quarantine.count(rig.store) == 3


async def test_a_repeat_of_a_quarantined_payload_is_skipped(rig: Rig) -> None:
    await rig.append(1, poison=True)
    await rig.append(2)
    last = await rig.append(1, poison=True)  # the same payload id appended again (a retry)
    task = asyncio.create_task(rig.processor.run())
    try:
        await processed_through(rig, last)
    finally:
        task.cancel()
    assert quarantine.count(rig.store) == 1
    assert rig.processor.counts["quarantined"] == 1
    assert rig.total() == expected([2])


async def test_a_store_outage_is_retried_and_quarantines_nothing(rig: Rig) -> None:
    rig.faults.poison = False
    rig.faults.outages = 5
    last = 0
    for index in range(50):
        last = await rig.append(index)
    task = asyncio.create_task(rig.processor.run())
    try:
        await processed_through(rig, last)
    finally:
        task.cancel()
    assert rig.processor.counts["error"] >= 5
    assert rig.processor.counts["quarantined"] == 0
    assert quarantine.count(rig.store) == 0
    assert rig.total() == expected(range(50))


async def test_reprocessing_counts_a_fixed_payload_once_and_keeps_one_still_failing(
    rig: Rig,
) -> None:
    for index in range(10):
        await rig.append(index, poison=index in (3, 6))
    task = asyncio.create_task(rig.processor.run())
    try:
        await processed_through(rig, 10)
    finally:
        task.cancel()
    before = rig.total()

    still = quarantine.reprocess(rig.store, "shop", "production", payload_ids=None, now_ms=HOUR)
    assert (still.reprocessed, [f.payload_id for f in still.failed]) == (0, ["id-3", "id-6"])
    assert [
        item["attempts"] for item in quarantine.listing(rig.store, "shop", "production", limit=5)
    ] == [2, 2]

    rig.faults.poison = False  # the bug that made them fail is fixed
    one = quarantine.reprocess(rig.store, "shop", "production", payload_ids=["id-6"], now_ms=HOUR)
    assert (one.reprocessed, one.failed, one.remaining) == (1, [], 1)
    assert rig.total() == before + expected([6])
    rest = quarantine.reprocess(rig.store, "shop", "production", payload_ids=None, now_ms=HOUR)
    assert (rest.reprocessed, rest.remaining) == (1, 0)
    assert rig.total() == before + expected([3, 6])
    # nothing is left to count twice; a later repeat of a reprocessed payload is a duplicate
    assert (
        quarantine.reprocess(
            rig.store, "shop", "production", payload_ids=None, now_ms=HOUR
        ).reprocessed
        == 0
    )
    record = Record(
        seq=99,
        received_ms=HOUR,
        kind=Kind.ANALYTICS,
        project="shop",
        environment="production",
        payload_id="id-3",
        payload=events(3, poison=True),
    )
    assert rig.store.commit("node", [record], now_ms=HOUR).duplicates == 1
    assert rig.total() == before + expected([3, 6])
