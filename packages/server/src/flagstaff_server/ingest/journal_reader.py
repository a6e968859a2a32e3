"""Reading the journal's durable records in seq order from a position, in bounded batches, for
one consumer thread; it follows appends into new segments and survives a release deleting the
one it reads. Never writes."""

from __future__ import annotations

from typing import Protocol

from flagstaff_server.ingest import record as framing
from flagstaff_server.ingest.journal_segment import Segment
from flagstaff_server.ingest.record import Record

READ_CHUNK = 4 << 20
BATCH_BYTES = 16 << 20
"""Payload bytes one read returns at most (past its first record): what a consumer holds, and
parses, at once. Without it a backlog of large payloads came back `max_records` at a time, 500
bodies of up to 10 MiB each in one batch."""


class DurableLog(Protocol):
    """What a reader needs of the journal: the journal itself in its process, or the processor
    process's view of the same directory (`processor_child`)."""

    @property
    def durable_seq(self) -> int: ...

    def current_segments(self) -> list[Segment]: ...

    def segments_after(self, seq: int) -> list[Segment]: ...


class ConsumedLog(DurableLog, Protocol):
    """A log whose consumer also releases what it committed."""

    def release(self, through_seq: int) -> int: ...


class JournalReader:
    """Reads durable records in seq order from a position; used by one consumer thread."""

    def __init__(self, journal: DurableLog, after_seq: int) -> None:
        self.journal = journal
        self.position = after_seq
        self._segment: Segment | None = None
        self._offset = 0

    def read(
        self,
        *,
        max_records: int = 2000,
        max_bytes: int = READ_CHUNK,
        max_batch_bytes: int = BATCH_BYTES,
    ) -> list[Record]:
        """The next durable records, oldest first: at most `max_records`, and no more payload
        bytes in all than `max_batch_bytes` (though always the first record, however large);
        [] when caught up."""
        durable = self.journal.durable_seq
        records: list[Record] = []
        payload_bytes = 0
        full = False
        while len(records) < max_records and self.position < durable:
            if self._segment is None:
                self._seek()
                if self._segment is None:
                    break
            data = self._chunk(self._segment, max_bytes)
            if data is None:
                self._segment = None
                continue
            found = framing.scan(data, limit=max_records - len(records))
            consumed = 0
            for item, end in zip(found.records, found.ends, strict=True):
                if item.seq > durable:
                    break
                if item.seq > self.position:
                    if records and payload_bytes + len(item.payload) > max_batch_bytes:
                        full = True
                        break
                    records.append(item)
                    payload_bytes += len(item.payload)
                    self.position = item.seq
                consumed = end
            self._offset += consumed
            if full or (consumed == 0 and not self._advance()):
                break
        return records

    def _chunk(self, segment: Segment, max_bytes: int) -> bytes | None:
        """Bytes from the reader's offset: at least one whole frame when one is there."""
        try:
            with segment.path.open("rb") as handle:
                handle.seek(self._offset)
                head = handle.read(framing.FRAME.size)
                if len(head) < framing.FRAME.size:
                    return head
                length = framing.FRAME.unpack(head)[0]
                rest = handle.read(max(max_bytes, min(length, framing.MAX_BODY)))
                return head + rest
        except FileNotFoundError:
            return None

    def _seek(self) -> None:
        segments = self.journal.segments_after(self.position)
        self._segment = segments[0] if segments else None
        self._offset = 0

    def _advance(self) -> bool:
        """Move to the next segment when the current one is sealed and read to its end."""
        segments = self.journal.current_segments()
        current = self._segment
        for index, segment in enumerate(segments):
            if current is not None and segment.first_seq == current.first_seq:
                if index + 1 < len(segments):
                    self._segment = segments[index + 1]
                    self._offset = 0
                    return True
                return False
        self._seek()
        return self._segment is not None and self._segment is not current
