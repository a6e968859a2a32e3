"""The durable log's record: what one accepted event payload is on disk, and its framing
(length prefix, CRC-32 of the body). Pure bytes in and out; no files, no clock."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum

FRAME = struct.Struct("<II")
"""Frame header: body length, CRC-32 of the body."""
FIXED = struct.Struct("<QqBHHH")
"""Body start: seq, received (epoch ms), kind, then the lengths of project, environment and
payload id; those three UTF-8 strings follow, then the payload bytes up to the body's end."""
MAX_BODY = 1 << 30
CRC_PIECE = 4096
"""Bytes per `zlib.crc32` call when framing: below the 5 kB from which it releases the GIL."""


class Kind(IntEnum):
    ANALYTICS = 0
    DIAGNOSTIC = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    seq: int
    received_ms: int
    kind: Kind
    project: str
    environment: str
    payload_id: str
    """The SDK's `X-LaunchDarkly-Payload-ID`, or one the node generated for a payload sent
    without it (diagnostics): processing de-duplicates by (project, environment, payload id)."""
    payload: bytes
    """The event JSON as received (decompressed), validated before it was appended."""


def encode(record: Record) -> bytes:
    return b"".join(frame_parts(record))


def frame_parts(record: Record) -> tuple[bytes, bytes]:
    """The record's frame as (frame header + body start, payload): the payload is framed by
    reference, never copied, and the CRC runs over both pieces as one body."""
    project = record.project.encode()
    environment = record.environment.encode()
    payload_id = record.payload_id.encode()
    head = b"".join(
        (
            FIXED.pack(
                record.seq,
                record.received_ms,
                record.kind,
                len(project),
                len(environment),
                len(payload_id),
            ),
            project,
            environment,
            payload_id,
        )
    )
    crc = crc32_holding_gil(record.payload, head)
    return FRAME.pack(len(head) + len(record.payload), crc) + head, record.payload


def crc32_holding_gil(payload: bytes, head: bytes) -> int:
    """CRC-32 of head + payload, computed in pieces small enough that `zlib.crc32` keeps the
    GIL (it releases it for buffers over 5 kB). A journal thread framing a batch then holds the
    GIL once, for the whole batch, instead of giving it up per record and queueing behind the
    busy event loop (up to the 5 ms switch interval) to get it back, every time."""
    crc = zlib.crc32(head)
    view = memoryview(payload)
    for start in range(0, len(view), CRC_PIECE):
        crc = zlib.crc32(view[start : start + CRC_PIECE], crc)
    return crc


def decode_body(body: bytes | memoryview, *, payload: bool = True) -> Record:
    seq, received_ms, kind, project_len, environment_len, id_len = FIXED.unpack_from(body, 0)
    start = FIXED.size
    view = memoryview(body)
    project = bytes(view[start : start + project_len]).decode()
    start += project_len
    environment = bytes(view[start : start + environment_len]).decode()
    start += environment_len
    payload_id = bytes(view[start : start + id_len]).decode()
    start += id_len
    return Record(
        seq=seq,
        received_ms=received_ms,
        kind=Kind(kind),
        project=project,
        environment=environment,
        payload_id=payload_id,
        payload=bytes(view[start:]) if payload else b"",
    )


@dataclass(frozen=True, slots=True)
class Scan:
    records: list[Record]
    valid_bytes: int
    """Bytes from the start of the buffer up to the end of the last intact record."""
    ends: list[int]
    """Where each record's frame ends in the buffer."""
    torn: bool
    """Bytes followed the last intact record that do not form one (a torn or corrupt tail)."""


def scan(data: bytes | memoryview, *, limit: int | None = None, payloads: bool = True) -> Scan:
    """Decode the intact records at the start of `data` (at most `limit`), stopping at the first
    frame that is short or fails its CRC: such a frame was never acknowledged, so it is dropped.
    `payloads=False` leaves each record's payload empty (a recovery scan needs only headers)."""
    view = memoryview(data)
    records: list[Record] = []
    ends: list[int] = []
    offset = 0
    end = len(view)
    while offset < end and (limit is None or len(records) < limit):
        if end - offset < FRAME.size:
            break
        length, crc = FRAME.unpack_from(view, offset)
        start = offset + FRAME.size
        if length < FIXED.size or length > MAX_BODY or start + length > end:
            break
        body = view[start : start + length]
        if zlib.crc32(body) != crc:
            break
        try:
            records.append(decode_body(body, payload=payloads))
        except (ValueError, UnicodeDecodeError):
            break
        offset = start + length
        ends.append(offset)
    torn = offset < end and (limit is None or len(records) < limit)
    return Scan(records, offset, ends, torn)
