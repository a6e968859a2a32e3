"""The relay's durable event spool: one file per accepted event payload (a JSON header line, then
the payload bytes), fsync'd with its directory entry before the SDK gets its 202, removed only
after upstream accepted it. Payloads upstream refuses for good move to `rejected/` and are counted.

Blocking file I/O runs in one worker thread; the event loop owns the index of pending entries.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from flagstaff_server.durable import fsync_directory, replace_file

log = logging.getLogger(__name__)

SUFFIX = ".event"
REJECTED_DIR = "rejected"


@dataclass(frozen=True, slots=True, kw_only=True)
class SpooledEvent:
    seq: int
    route: str
    """`bulk`, `diagnostic`, `mobile`, `mobile-diagnostic`, `browser`, `browser-diagnostic`."""
    environment: str
    """The relay environment's name."""
    payload_id: str
    received_ms: int
    headers: dict[str, str] = field(default_factory=dict)
    """SDK headers passed on upstream (User-Agent, X-LaunchDarkly-Wrapper, -Tags)."""
    payload: bytes = b""


def encode(event: SpooledEvent) -> bytes:
    header = {
        "seq": event.seq,
        "route": event.route,
        "environment": event.environment,
        "payloadId": event.payload_id,
        "receivedMs": event.received_ms,
        "headers": event.headers,
    }
    return orjson.dumps(header) + b"\n" + event.payload


def decode(raw: bytes) -> SpooledEvent:
    """Raises ValueError for a file that is not a spooled event."""
    head, newline, payload = raw.partition(b"\n")
    if not newline:
        raise ValueError("no header line")
    header: dict[str, Any] = orjson.loads(head)
    return SpooledEvent(
        seq=int(header["seq"]),
        route=str(header["route"]),
        environment=str(header["environment"]),
        payload_id=str(header["payloadId"]),
        received_ms=int(header["receivedMs"]),
        headers={str(k): str(v) for k, v in dict(header.get("headers") or {}).items()},
        payload=payload,
    )


def _name(seq: int) -> str:
    return f"{seq:020d}{SUFFIX}"


class EventSpool:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.pending: dict[int, int] = {}
        """seq → file size, for every payload not yet accepted upstream."""
        self.bytes = 0
        self.next_seq = 1
        self.rejected = 0
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="relay-spool")
        self.added = asyncio.Event()

    def recover(self) -> int:
        """Blocking: index the payloads left from before a restart; returns how many."""
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / REJECTED_DIR).mkdir(exist_ok=True)
        for leftover in self.directory.glob(f".*{SUFFIX}.tmp"):
            leftover.unlink(missing_ok=True)  # never acknowledged
        found = []
        for path in self.directory.glob(f"*{SUFFIX}"):
            try:
                found.append((int(path.name.removesuffix(SUFFIX)), path.stat().st_size))
            except ValueError:
                continue
        for seq, size in sorted(found):
            self.pending[seq] = size
            self.bytes += size
            self.next_seq = max(self.next_seq, seq + 1)
        self.rejected = sum(1 for _ in (self.directory / REJECTED_DIR).glob(f"*{SUFFIX}"))
        if self.pending:
            self.added.set()
        return len(self.pending)

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    async def append(
        self,
        *,
        route: str,
        environment: str,
        payload_id: str,
        received_ms: int,
        headers: dict[str, str],
        payload: bytes,
    ) -> int:
        """Make the payload durable; returns its seq. Raises OSError when it cannot be written
        (then it is not in the spool and the SDK gets a 503)."""
        seq = self.next_seq
        self.next_seq += 1
        event = SpooledEvent(
            seq=seq,
            route=route,
            environment=environment,
            payload_id=payload_id,
            received_ms=received_ms,
            headers=headers,
            payload=payload,
        )
        data = encode(event)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._write, seq, data)
        self.pending[seq] = len(data)
        self.bytes += len(data)
        self.added.set()
        return seq

    def _write(self, seq: int, data: bytes) -> None:
        replace_file(self.directory / _name(seq), data)
        fsync_directory(self.directory)

    def oldest(self) -> int | None:
        # seqs are inserted in increasing order (sorted at recovery, counted up after)
        return next(iter(self.pending), None)

    async def read(self, seq: int) -> SpooledEvent | None:
        """The payload, or None when its file is unreadable (it is moved aside and counted)."""
        path = self.directory / _name(seq)
        loop = asyncio.get_running_loop()
        try:
            raw = await loop.run_in_executor(self._executor, path.read_bytes)
            return decode(raw)
        except (OSError, ValueError, KeyError) as exc:
            log.error("unreadable spooled event %s: %s", path, exc)
            await self.reject(seq)
            return None

    async def remove(self, seq: int) -> None:
        """Upstream accepted the payload."""
        path = self.directory / _name(seq)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, lambda: path.unlink(missing_ok=True))
        self.bytes -= self.pending.pop(seq, 0)

    async def reject(self, seq: int) -> None:
        """Upstream will never accept the payload: keep it aside for an operator, count it."""
        path = self.directory / _name(seq)
        target = self.directory / REJECTED_DIR / path.name
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, os.replace, path, target)
        except OSError as exc:
            log.error("could not move %s aside: %s", path, exc)
        self.bytes -= self.pending.pop(seq, 0)
        self.rejected += 1
