"""The journal: group commit (concurrent appends share fsyncs), recovery cutting torn tails,
reading across segments, and release keeping the seq floor."""

from __future__ import annotations

import asyncio
from pathlib import Path

from flagstaff_server.ingest import IngestConfig, journal_reader
from flagstaff_server.ingest.journal import Journal
from flagstaff_server.ingest.journal_reader import JournalReader
from flagstaff_server.ingest.record import Kind


async def append(journal: Journal, n: int, size: int = 100) -> int:
    return await journal.submit(
        kind=Kind.ANALYTICS,
        project="shop",
        environment="production",
        payload_id=f"id-{n}",
        payload=b"[" + b" " * size + b"]",
        received_ms=1_000 + n,
    )


def log_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.log"))


def read_all(journal: Journal, after: int = 0) -> list[int]:
    reader = JournalReader(journal, after)
    seqs: list[int] = []
    for _ in range(1000):
        batch = reader.read(max_records=7)
        if not batch:
            break
        seqs.extend(r.seq for r in batch)
    return seqs


async def test_concurrent_appends_share_fsyncs_and_are_all_durable(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    seqs = await asyncio.gather(*(append(journal, n) for n in range(200)))
    assert sorted(seqs) == list(range(1, 201))
    assert journal.durable_seq == 200
    assert journal.appended == 200
    assert journal.fsyncs < 200
    assert read_all(journal) == list(range(1, 201))
    journal.close()


async def test_recovery_cuts_a_torn_tail_and_continues_the_sequence(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    for n in range(5):
        await append(journal, n)
    journal.close()
    segment = log_files(tmp_path)[0]
    intact = segment.stat().st_size
    with segment.open("ab") as handle:
        handle.write(b"\x40\x00\x00\x00garbage")
    seen: list[str] = []
    reopened = Journal(tmp_path)
    recovery = reopened.recover(lambda record: seen.append(record.payload_id))
    assert recovery.records == 5
    assert recovery.torn_bytes == 11
    assert segment.stat().st_size == intact
    assert seen == [f"id-{n}" for n in range(5)]
    assert await append(reopened, 5) == 6
    assert read_all(reopened, after=3) == [4, 5, 6]
    reopened.close()


async def test_reads_cross_segments_and_release_keeps_the_newest(tmp_path: Path) -> None:
    journal = Journal(tmp_path, segment_bytes=1_000)
    journal.recover()
    for n in range(40):
        await append(journal, n)
    assert len(journal.segments) > 3
    assert read_all(journal) == list(range(1, 41))
    assert read_all(journal, after=17) == list(range(18, 41))
    segments = len(journal.segments)
    assert journal.release(40) == segments - 1
    assert len(journal.segments) == 1
    assert len(log_files(tmp_path)) == 1
    journal.close()
    reopened = Journal(tmp_path, segment_bytes=1_000)
    reopened.recover()
    assert await append(reopened, 40) == 41
    reopened.close()


async def test_release_stops_at_a_segment_holding_unprocessed_records(tmp_path: Path) -> None:
    journal = Journal(tmp_path, segment_bytes=1_000)
    journal.recover()
    for n in range(30):
        await append(journal, n)
    journal.release(12)
    assert read_all(journal, after=12) == list(range(13, 31))
    assert journal.segments[0].first_seq <= 13
    journal.close()


async def test_a_failed_write_fails_its_waiters_and_leaves_no_record(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    await append(journal, 0)
    real_fd = journal._fd
    journal._fd = 999_999  # a closed descriptor: the write raises EBADF
    try:
        await append(journal, 1)
    except OSError:
        pass
    else:
        raise AssertionError("the append should have failed")
    journal._fd = real_fd
    assert await append(journal, 2) == 3
    assert read_all(journal) == [1, 3]
    journal.close()


async def test_a_restart_scans_only_the_tail_and_still_reads_everything(tmp_path: Path) -> None:
    journal = Journal(tmp_path, segment_bytes=1_000)
    journal.recover()
    for n in range(40):
        await append(journal, n)
    journal.close()
    seen: list[int] = []
    reopened = Journal(tmp_path, segment_bytes=1_000, tail_bytes=2_500)
    recovery = reopened.recover(lambda record: seen.append(record.seq))
    assert recovery.unscanned_segments > 0
    assert seen == list(range(41 - len(seen), 41))
    assert len(seen) < 40
    assert await append(reopened, 40) == 41
    assert read_all(reopened) == list(range(1, 42))
    reopened.close()


def test_an_empty_journal_recovers_with_nothing_to_report(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal")
    recovery = journal.recover()
    assert (recovery.records, recovery.torn_bytes, recovery.unscanned_segments) == (0, 0, 0)
    assert recovery.next_seq == 1
    journal.close()


async def test_released_records_stop_counting_even_in_the_newest_segment(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    for n in range(10):
        await append(journal, n)
    written = journal.size_bytes
    assert journal.unreleased_bytes == written
    journal.release(10)
    # the one segment stays (it keeps the seq floor) but holds nothing unprocessed
    assert (journal.size_bytes, journal.unreleased_bytes) == (written, 0)
    await append(journal, 10)
    assert journal.unreleased_bytes == journal.size_bytes - written
    journal.close()
    reopened = Journal(tmp_path)
    reopened.recover()
    assert reopened.unreleased_bytes == reopened.size_bytes
    reopened.release(11)
    assert reopened.unreleased_bytes == 0
    reopened.close()


async def test_a_partly_released_segment_counts_what_follows_the_released_seq(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    big = 70 << 10  # over the mark spacing: every record's end is marked
    for n in range(4):
        await append(journal, n, size=big)
    frame = journal.size_bytes // 4
    journal.release(1)
    assert journal.unreleased_bytes == 3 * frame
    journal.release(3)
    assert journal.unreleased_bytes == frame
    journal.release(2)  # an older position never takes a release back
    assert journal.unreleased_bytes == frame
    journal.close()
    reopened = Journal(tmp_path)
    reopened.recover()
    reopened.release(2)
    assert reopened.unreleased_bytes == 2 * frame
    reopened.close()


async def test_a_small_budget_marks_closely_so_the_backlog_is_not_overcounted(
    tmp_path: Path,
) -> None:
    # 20 kB: the budget of the disk-budget integration test, far below the default spacing
    config = IngestConfig(data_dir=tmp_path, disk_budget_bytes=20_000)
    journal = Journal(tmp_path, mark_bytes=config.mark_spacing)
    journal.recover()
    for n in range(40):
        await append(journal, n, size=500)
    frame = journal.size_bytes // 40
    journal.release(40)
    await append(journal, 40, size=500)  # one payload waits: it alone may count, about
    assert journal.unreleased_bytes <= frame + config.mark_spacing
    assert journal.unreleased_bytes < config.disk_budget_bytes // 8
    journal.close()
    reopened = Journal(tmp_path, mark_bytes=config.mark_spacing)
    reopened.recover()
    reopened.release(40)
    assert reopened.unreleased_bytes <= frame + config.mark_spacing
    reopened.close()


def test_a_small_disk_budget_makes_smaller_segments() -> None:
    assert IngestConfig(data_dir=Path("x")).segment_size == 64 << 20
    assert IngestConfig(data_dir=Path("x"), disk_budget_bytes=10 << 20).segment_size == 5 << 20
    assert IngestConfig(data_dir=Path("x"), disk_budget_bytes=20_000).segment_size == 1 << 20
    assert IngestConfig(data_dir=Path("x")).mark_spacing == 64 << 10
    assert IngestConfig(data_dir=Path("x"), disk_budget_bytes=20_000).mark_spacing == 1_250


async def test_a_read_holds_at_most_its_payload_budget_but_always_one_record(
    tmp_path: Path,
) -> None:
    """A backlog of large payloads (after an outage, the fuzz run's memory watch found) is
    read in batches of bounded size, however many records `max_records` would allow."""
    journal = Journal(tmp_path)
    journal.recover()
    for n in range(7):
        await append(journal, n, size=1_000)  # 1,002-byte payloads
    reader = JournalReader(journal, 0)
    batches = []
    while batch := reader.read(max_records=500, max_batch_bytes=2_500):
        batches.append([record.seq for record in batch])
    assert batches == [[1, 2], [3, 4], [5, 6], [7]]
    # one record over the budget still comes, alone
    assert [r.seq for r in JournalReader(journal, 0).read(max_batch_bytes=10)] == [1]
    journal.close()


async def test_reads_are_bounded_by_default(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.recover()
    size = journal_reader.BATCH_BYTES // 3
    for n in range(5):
        await append(journal, n, size=size)
    batch = JournalReader(journal, 0).read(max_records=500)
    assert [record.seq for record in batch] == [1, 2]
    journal.close()
