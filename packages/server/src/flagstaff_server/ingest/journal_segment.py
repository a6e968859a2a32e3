"""One segment file of the journal: its name, the (seq, end offset) marks that say how much of it
a release frees, and writing framed records to it with `writev`. No locking: the journal holds
its lock around every use."""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

SUFFIX = ".log"
IOV_MAX = 1024
"""Buffers per `writev` call (POSIX guarantees at least 16; Linux allows 1024)."""
MARK_BYTES = 64 << 10
"""Default spacing of a segment's (seq, end offset) marks: a partly released segment counts as
released the bytes up to the last mark at or below the released seq, so it may overcount what is
left by less than the spacing (a fully released one counts nothing: see `Segment.last_seq`). A
small disk budget asks for closer marks (`Journal(mark_bytes=...)`): an overcount near the budget
would refuse payloads while nearly nothing is waiting."""


@dataclass(slots=True)
class Segment:
    first_seq: int
    path: Path
    size: int
    last_seq: int | None = None
    """The seq of its last record; None for a sealed segment opened without a scan, or empty."""
    mark_seqs: array[int] = field(default_factory=lambda: array("q"))
    mark_ends: array[int] = field(default_factory=lambda: array("q"))
    """Where the frame of record `mark_seqs[i]` ends, every `MARK_BYTES` or so, ascending."""

    def mark(self, seq: int, end: int, spacing: int = MARK_BYTES) -> None:
        """Note that the records up to `seq` end at byte `end` (call in seq order); a mark is
        kept every `spacing` bytes or so."""
        self.last_seq = seq
        if not self.mark_ends or end - self.mark_ends[-1] >= spacing:
            self.mark_seqs.append(seq)
            self.mark_ends.append(end)

    def released_bytes(self, through_seq: int) -> int:
        """Bytes at the start of the segment known to hold only records at or below
        `through_seq`."""
        if self.last_seq is not None and through_seq >= self.last_seq:
            return self.size
        index = bisect_right(self.mark_seqs, through_seq)
        return self.mark_ends[index - 1] if index else 0


def segment_name(first_seq: int) -> str:
    return f"{first_seq:020d}{SUFFIX}"


def segments_after(segments: list[Segment], seq: int) -> list[Segment]:
    """Of `segments` (oldest first), those that may hold records after `seq`."""
    chosen: list[Segment] = []
    for index, segment in enumerate(segments):
        following = segments[index + 1] if index + 1 < len(segments) else None
        if following is not None and following.first_seq <= seq + 1:
            continue
        chosen.append(segment)
    return chosen


def write_all(fd: int, parts: list[bytes]) -> None:
    """Write every part in order with as few `writev` calls as the kernel allows, finishing
    any short write."""
    index = 0
    while index < len(parts):
        chunk = parts[index : index + IOV_MAX]
        written = os.writev(fd, chunk)
        index += len(chunk)
        total = sum(len(part) for part in chunk)
        if written < total:
            rest = memoryview(b"".join(chunk))[written:]
            while rest:
                rest = rest[os.write(fd, rest) :]
