"""The durable local log (journal): segment files of framed records, appended with group commit
(every request waiting at one moment shares one write and one fsync) and truncated only by
`release`, after processing committed; it counts the bytes not released yet (the disk budget's
measure). A segment file is `journal_segment`'s, reading in seq order `journal_reader`'s. Owns its
directory; knows nothing of HTTP or analytics.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from flagstaff_server.durable import PRIVATE_FILE_MODE, fsync_directory
from flagstaff_server.ingest import record as framing
from flagstaff_server.ingest.journal_segment import (
    MARK_BYTES,
    SUFFIX,
    Segment,
    segment_name,
    segments_after,
    write_all,
)
from flagstaff_server.ingest.record import Kind, Record

log = logging.getLogger(__name__)

FRAME_OVERHEAD = framing.FRAME.size + framing.FIXED.size + 3 * 64
"""A record's bytes beyond its payload, as counted against the disk budget before framing."""


@dataclass(frozen=True, slots=True)
class Recovery:
    records: int
    torn_bytes: int
    """Bytes dropped from torn or corrupt tails (never acknowledged)."""
    next_seq: int
    unscanned_segments: int
    """Older segments opened without a scan (beyond the tail)."""


class Journal:
    """Open with `recover` (blocking; replays every intact record to `visit`), then `append` from
    the event loop. `durable_seq` is the last record known to be on disk."""

    def __init__(
        self,
        directory: Path,
        *,
        segment_bytes: int = 64 << 20,
        tail_bytes: int = 128 << 20,
        mark_bytes: int = MARK_BYTES,
    ) -> None:
        self.directory = directory
        self.segment_bytes = segment_bytes
        self.mark_bytes = mark_bytes
        self.tail_bytes = tail_bytes
        self._rotate = False
        self.segments: list[Segment] = []
        self.next_seq = 1
        self.durable_seq = 0
        self.appended = 0
        self.fsyncs = 0
        self._lock = threading.Lock()
        self._fd = -1
        self._pending: list[Record] = []
        self._pending_bytes = 0
        self._stored_bytes = 0
        """The segments' sizes summed; changed under the lock, read without it."""
        self._released_seq = 0
        self._released_bytes = 0
        """Bytes of the oldest segment that hold only released records (the segments before
        it are deleted); changed under the lock, read without it."""
        self._waiters: list[asyncio.Future[int]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="journal")

    # opening -----------------------------------------------------------------------------------

    def recover(self, visit: Callable[[Record], None] | None = None) -> Recovery:
        """Open the journal: scan the log tail (the newest segments, at least `tail_bytes`),
        cut a torn tail, and open the last segment for appending. `visit` sees each scanned
        record's header (its payload left empty). Older segments were sealed after an fsync and
        are checked by their CRCs when read, so a large backlog does not slow a restart."""
        self.directory.mkdir(parents=True, exist_ok=True)
        paths = sorted(self.directory.glob(f"*{SUFFIX}"))
        sizes = [path.stat().st_size for path in paths]
        scan_from = max(len(paths) - 1, 0)
        tail = sizes[-1] if sizes else 0
        while scan_from > 0 and tail + sizes[scan_from - 1] <= self.tail_bytes:
            scan_from -= 1
            tail += sizes[scan_from]
        last_seq = 0
        floor = 1
        records = 0
        torn_bytes = 0
        for index, path in enumerate(paths):
            first = int(path.stem)
            floor = max(floor, first)
            if index < scan_from:
                self.segments.append(Segment(first, path, sizes[index]))
                continue
            data = path.read_bytes()
            found = framing.scan(data, payloads=False)
            records += len(found.records)
            segment = Segment(first, path, found.valid_bytes)
            for item, end in zip(found.records, found.ends, strict=True):
                last_seq = item.seq
                segment.mark(item.seq, end, self.mark_bytes)
                if visit is not None:
                    visit(item)
            if found.torn:
                torn_bytes += len(data) - found.valid_bytes
                if index != len(paths) - 1:
                    log.error(
                        "journal segment %s is corrupt after byte %d", path, found.valid_bytes
                    )
                with path.open("r+b") as handle:
                    handle.truncate(found.valid_bytes)
                    os.fsync(handle.fileno())
            self.segments.append(segment)
        self._stored_bytes = sum(segment.size for segment in self.segments)
        self.next_seq = max(last_seq + 1, floor)
        self.durable_seq = self.next_seq - 1
        if not self.segments:
            self._open_segment(self.next_seq)
        else:
            self._fd = os.open(self.segments[-1].path, os.O_WRONLY | os.O_APPEND)
        return Recovery(
            records=records,
            torn_bytes=torn_bytes,
            next_seq=self.next_seq,
            unscanned_segments=scan_from,
        )

    def _open_segment(self, first_seq: int) -> None:
        path = self.directory / segment_name(first_seq)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
        # the new file's directory entry must be durable before any record in it is acknowledged
        fsync_directory(self.directory)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = fd
        with self._lock:
            self.segments.append(Segment(first_seq, path, 0))

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # appending ---------------------------------------------------------------------------------

    @property
    def size_bytes(self) -> int:
        """Bytes in the log, plus those queued for the next write."""
        return self._stored_bytes + self._pending_bytes

    @property
    def unreleased_bytes(self) -> int:
        """Bytes of records not released yet (not processed, or not forwarded), plus those
        queued for the next write: what the disk budget counts (asked on every request). Records
        released but still in the newest segment, which stays until it rotates, are not in it."""
        return self._stored_bytes + self._pending_bytes - self._released_bytes

    def submit(
        self,
        *,
        kind: Kind,
        project: str,
        environment: str,
        payload_id: str,
        payload: bytes,
        received_ms: int,
    ) -> asyncio.Future[int]:
        """Queue one record for the next group commit; the future gives its seq once it is on
        disk, or the OSError of a failed write (the record is then not in the log). Call from
        the event loop."""
        seq = self.next_seq
        self.next_seq += 1
        # framing (and its CRC, which releases the GIL for large payloads and would then wait
        # to get it back) happens on the journal thread, off the event loop
        item = Record(
            seq=seq,
            received_ms=received_ms,
            kind=kind,
            project=project,
            environment=environment,
            payload_id=payload_id,
            payload=payload,
        )
        loop = self._loop
        if loop is None:
            # asked once: each `get_running_loop` costs a getpid() system call (fork check)
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        self._pending.append(item)
        self._pending_bytes += len(payload) + FRAME_OVERHEAD
        self._waiters.append(future)
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        return future

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            records, waiters = self._pending, self._waiters
            first_seq = records[0].seq
            last_seq = records[-1].seq
            self._pending, self._waiters, self._pending_bytes = [], [], 0
            try:
                await loop.run_in_executor(self._executor, self._write, records, first_seq)
            except Exception as exc:
                log.error("journal write failed: %s", exc)
                # callers answer 503 for an OSError; any failure here means "not on disk"
                error = exc if isinstance(exc, OSError) else OSError(str(exc))
                # seqs of a failed batch are never reused: readers skip the gap
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_exception(error)
                continue
            self.durable_seq = last_seq
            self.appended += len(records)
            self.fsyncs += 1
            for seq, waiter in enumerate(waiters, first_seq):
                if not waiter.done():
                    waiter.set_result(seq)

    def _write(self, records: list[Record], first_seq: int) -> None:
        """Runs on the journal thread: frames the batch, then one `writev` (the payloads are
        written by reference, not joined) and one fsync for the whole batch."""
        active = self.segments[-1]
        if active.size >= self.segment_bytes or self._rotate:
            self._open_segment(first_seq)
            self._rotate = False
            active = self.segments[-1]
        parts: list[bytes] = []
        for item in records:
            parts.extend(framing.frame_parts(item))
        size = sum(len(part) for part in parts)
        try:
            write_all(self._fd, parts)
            os.fsync(self._fd)
        except OSError:
            # cut what reached the file, so no unacknowledged record is ever processed
            try:
                os.ftruncate(self._fd, active.size)
            except OSError:
                # the bytes stay; later batches go to a new segment, so they end this one
                # where a reader stops, after every acknowledged record in it
                self._rotate = True
                log.exception("journal could not cut a failed write")
            raise
        with self._lock:
            active.size += size
            active.mark(records[-1].seq, active.size, self.mark_bytes)
            self._stored_bytes += size

    # reading and releasing ---------------------------------------------------------------------

    def current_segments(self) -> list[Segment]:
        """The segments as they are now, oldest first (a copy: appends and releases go on)."""
        with self._lock:
            return list(self.segments)

    def segments_after(self, seq: int) -> list[Segment]:
        """The segments that may hold records after `seq`, oldest first."""
        return segments_after(self.current_segments(), seq)

    def release(self, through_seq: int) -> int:
        """Delete the segments whose every record is at or below `through_seq` (processed and
        committed), and stop counting the released part of the oldest one left. The newest
        segment always stays: its name keeps the seq counter's floor."""
        removed: list[Segment] = []
        with self._lock:
            self._released_seq = max(self._released_seq, through_seq)
            through_seq = self._released_seq
            while len(self.segments) > 1 and self.segments[1].first_seq <= through_seq + 1:
                removed.append(self.segments.pop(0))
                self._stored_bytes -= removed[-1].size
            if self.segments:
                self._released_bytes = self.segments[0].released_bytes(through_seq)
        for segment in removed:
            with contextlib.suppress(FileNotFoundError):
                segment.path.unlink()
        if removed:
            fsync_directory(self.directory)
        return len(removed)
