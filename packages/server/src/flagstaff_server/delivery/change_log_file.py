"""The disk format of one environment's FDv2 change log, kept beside its snapshot file so that a
restarted node still answers a client a few changes behind with just those changes.

Pure bytes in and out (the caller reads and writes files). Layout: a header line (JSON: format,
project, environment, the log floor `[seq, digest, epoch]`, the entry count and a blake2b
checksum of everything after the header), then one line per entry, `[seq, digest, event, epoch]`
as JSON, a tab, and the event data exactly as it is streamed. Format 1 (before epochs) had no
epochs and reads as epoch 1. Anything that does not decode whole, or fails the checksum, is
refused with ValueError: the node then starts without the log, never with a doubtful one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from flagstaff_server.delivery import sse
from flagstaff_server.delivery.snapshot import LogEntry, Snapshot, State

FORMAT = 2
READABLE = (1, 2)
EVENTS = (sse.PUT_OBJECT, sse.DELETE_OBJECT)
"""The only events a change log holds."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeptLog:
    project: str
    environment: str
    floor: State
    """The state the first entry applies to."""
    entries: tuple[LogEntry, ...]


def checksum(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=16).hexdigest()


def encode_log(snapshot: Snapshot) -> bytes:
    """The snapshot's change log as file bytes (its data is already encoded: only joined here)."""
    body = b"".join(
        orjson.dumps([entry.seq, entry.digest, entry.event.decode(), entry.epoch])
        + b"\t"
        + entry.data
        + b"\n"
        for entry in snapshot.log
    )
    header = {
        "format": FORMAT,
        "project": snapshot.project,
        "environment": snapshot.environment,
        "floor": [snapshot.log_floor[1], snapshot.log_floor[2], snapshot.log_floor[0]],
        "entries": len(snapshot.log),
        "checksum": checksum(body),
    }
    return orjson.dumps(header) + b"\n" + body


def decode_log(raw: bytes) -> KeptLog:
    """Raises ValueError for anything but a whole, intact log this code wrote."""
    header_line, newline, body = raw.partition(b"\n")
    if not newline:
        raise ValueError("no header line")
    header = _object(orjson.loads(header_line))
    if header.get("format") not in READABLE:
        raise ValueError(f"unknown change log format {header.get('format')!r}")
    if header.get("checksum") != checksum(body):
        raise ValueError("checksum mismatch (torn or corrupt file)")
    project, environment = header.get("project"), header.get("environment")
    if not isinstance(project, str) or not isinstance(environment, str):
        raise ValueError("project and environment must be strings")
    floor = _state(header.get("floor"), with_epoch=header["format"] >= 2)
    lines = body.split(b"\n")
    if lines.pop() != b"":
        raise ValueError("the last entry is not terminated")
    if len(lines) != header.get("entries"):
        raise ValueError(f"{len(lines)} entries, the header says {header.get('entries')!r}")
    entries = tuple(_entry(line, with_epoch=header["format"] >= 2) for line in lines)
    previous = floor[1]
    for entry in entries:
        if entry.seq <= previous:
            raise ValueError(f"entry seq {entry.seq} does not follow {previous}")
        previous = entry.seq
    return KeptLog(project=project, environment=environment, floor=floor, entries=entries)


def _entry(line: bytes, *, with_epoch: bool) -> LogEntry:
    head, tab, data = line.partition(b"\t")
    if not tab:
        raise ValueError("an entry without data")
    fields = orjson.loads(head)
    if not isinstance(fields, list) or len(fields) != (4 if with_epoch else 3):
        raise ValueError("an entry head is not [seq, digest, event, epoch]")
    epoch, seq, digest = _state([*fields[:2], *fields[3:]], with_epoch=with_epoch)
    event = fields[2].encode() if isinstance(fields[2], str) else b""
    if event not in EVENTS:
        raise ValueError(f"unexpected event {fields[2]!r}")
    _object(orjson.loads(data))  # streamed as it is: it must at least be a JSON object
    return LogEntry(seq=seq, digest=digest, event=event, data=data, epoch=epoch)


def _state(value: Any, *, with_epoch: bool) -> State:
    """`[seq, digest, epoch]` (format 1: `[seq, digest]`, epoch 1) as (epoch, seq, digest)."""
    if not isinstance(value, list) or len(value) != (3 if with_epoch else 2):
        raise ValueError(f"not a [seq, digest, epoch] state: {value!r}")
    seq, digest = value[0], value[1]
    epoch = value[2] if with_epoch else 1
    if not _is_count(seq) or not _is_count(epoch) or epoch < 1:
        raise ValueError(f"not a [seq, digest, epoch] state: {value!r}")
    if not isinstance(digest, str) or not digest:
        raise ValueError(f"not a [seq, digest, epoch] state: {value!r}")
    return epoch, seq, digest


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value
