"""A loopback HTTP tap in front of one region's ingest node, as its load balancer: it forwards each
event post, writes down what the node answered (payload id, credential, status) in a ledger the
regions' taps share, and on demand loses the node's answers after the node has stored the payload
(`lose_acks`) or answers 503 itself (`refuse`). With the node unreachable (killed) it resets the
client's connection, as a region that is gone does.

Test support: runs its own asyncio loop in a thread; asserts nothing itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import httpx
from support.deadlines import wait_until
from support.ports import free_port

Mode = Literal["pass", "lose_acks", "refuse"]

HOP_BY_HOP = frozenset({"host", "content-length", "connection", "keep-alive", "accept-encoding"})


@dataclass(frozen=True, slots=True)
class Exchange:
    """One event post that reached a tap, in arrival order across the ledger."""

    order: int
    region: str
    path: str
    payload_id: str
    credential: str
    status: int
    """What the ingest node answered; 0 when it was unreachable, 503 when the tap refused."""
    answered: bool
    """Whether the client got that answer (False: lost by the tap, or no answer at all)."""

    @property
    def stored(self) -> bool:
        """The node acknowledged it: it is in that region's journal (acks follow the fsync)."""
        return self.status == 202


@dataclass(frozen=True, slots=True)
class Seen:
    """What a tap read of a request before forwarding it."""

    region: str
    path: str
    payload_id: str
    credential: str


@dataclass
class Ledger:
    """Every exchange of every tap, thread-safe."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _entries: list[Exchange] = field(default_factory=list)

    def add(self, seen: Seen, *, status: int, answered: bool) -> None:
        with self._lock:
            self._entries.append(
                Exchange(
                    order=len(self._entries),
                    region=seen.region,
                    path=seen.path,
                    payload_id=seen.payload_id,
                    credential=seen.credential,
                    status=status,
                    answered=answered,
                )
            )

    def entries(self, *, credential: str | None = None, path: str = "/bulk") -> list[Exchange]:
        with self._lock:
            return [
                e
                for e in self._entries
                if e.path == path and (credential is None or e.credential == credential)
            ]

    def mark(self) -> int:
        """A position: `since(mark)` gives what came after it."""
        with self._lock:
            return len(self._entries)

    def stored_in(self, region: str, credential: str, *, since: int = 0) -> set[str]:
        return {
            e.payload_id
            for e in self.entries(credential=credential)
            if e.region == region and e.stored and e.order >= since
        }

    def refused_by(self, region: str, credential: str, *, since: int = 0) -> bool:
        """Whether `region`'s tap answered a post with 503 itself."""
        return any(
            e.region == region and e.status == 503 and e.order >= since
            for e in self.entries(credential=credential)
        )

    def lost_in(self, region: str, credential: str, *, since: int = 0) -> set[str]:
        """Payload ids `region` stored whose answer the client never got."""
        return {
            e.payload_id
            for e in self.entries(credential=credential)
            if e.region == region and e.stored and not e.answered and e.order >= since
        }

    def summary(self) -> dict[str, dict[str, int]]:
        """Per region: exchanges by outcome (for a failed wait's message)."""
        out: dict[str, dict[str, int]] = {}
        for e in self.entries():
            outcome = f"{e.status}{'' if e.answered else '-lost'}"
            counts = out.setdefault(e.region, {})
            counts[outcome] = counts.get(outcome, 0) + 1
        return out

    def crossed(self, source: str, target: str, credential: str) -> set[str]:
        """Payload ids `source` stored without its answer reaching the client, that `target`
        then stored too: retries that landed in both regions."""
        lost: dict[str, int] = {}
        crossed: set[str] = set()
        for e in self.entries(credential=credential):
            if e.region == source and e.stored and not e.answered:
                lost.setdefault(e.payload_id, e.order)
            elif e.region == target and e.stored and e.payload_id in lost:
                crossed.add(e.payload_id)
        return crossed


class IngestTap:
    def __init__(self, region: str, upstream_port: int, ledger: Ledger) -> None:
        self.region = region
        self.upstream = f"http://127.0.0.1:{upstream_port}"
        self.ledger = ledger
        self.port = free_port()
        self.mode: Mode = "pass"
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set(self, mode: Mode) -> None:
        self.mode = mode

    async def _handle(
        self, client: httpx.AsyncClient, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self._exchange(client, writer, method, target, headers, body):
                    return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _exchange(
        self,
        client: httpx.AsyncClient,
        writer: asyncio.StreamWriter,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
    ) -> bool:
        """Serve one request; False when the connection must end."""
        mode = self.mode
        record = Seen(
            region=self.region,
            path=target.split("?", 1)[0],
            payload_id=headers.get("x-launchdarkly-payload-id", ""),
            credential=headers.get("authorization", ""),
        )
        if mode == "refuse":
            self.ledger.add(record, status=503, answered=True)
            writer.write(b"HTTP/1.1 503 Refused\r\nContent-Length: 0\r\nRetry-After: 1\r\n\r\n")
            await writer.drain()
            return True
        forward = {k: v for k, v in headers.items() if k not in HOP_BY_HOP}
        try:
            response = await client.request(
                method, self.upstream + target, headers=forward, content=body
            )
        except httpx.HTTPError:
            self.ledger.add(record, status=0, answered=False)
            _reset(writer)
            return False
        if mode == "lose_acks":
            self.ledger.add(record, status=response.status_code, answered=False)
            _reset(writer)
            return False
        self.ledger.add(record, status=response.status_code, answered=True)
        date = response.headers.get("date")
        extra = f"Date: {date}\r\n" if date else ""
        writer.write(
            (
                f"HTTP/1.1 {response.status_code} Tapped\r\n"
                f"Content-Length: {len(response.content)}\r\n{extra}\r\n"
            ).encode()
            + response.content
        )
        await writer.drain()
        return True

    @contextmanager
    def running(self) -> Iterator[IngestTap]:
        ready = threading.Event()
        stop: list[asyncio.Event] = []

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            async with httpx.AsyncClient(timeout=10.0, trust_env=False) as client:
                server = await asyncio.start_server(
                    lambda r, w: self._handle(client, r, w), "127.0.0.1", self.port
                )
                stop.append(asyncio.Event())
                ready.set()
                await stop[0].wait()
                server.close()

        thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
        thread.start()
        wait_until(ready.is_set, what=f"the ingest tap of region {self.region} to start")
        try:
            yield self
        finally:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(stop[0].set)
            thread.join(timeout=10)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0): the client sees the connection fail, no answer."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(Exception):
        writer.transport.abort()
