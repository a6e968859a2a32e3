"""A TCP fault proxy on loopback for chaos tests: sits between an SDK and a delivery node and,
per request path, passes traffic or injects a fault (latency, reset, stall, close mid-stream,
an error status with optional Retry-After, blackhole).

Test support: runs its own asyncio loop in a thread; asserts nothing itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from support.deadlines import wait_until
from support.ports import free_port

FaultKind = Literal["pass", "latency", "reset", "stall", "close", "status", "blackhole"]

STREAM_PATHS = ("/all", "/sdk/stream")
POLL_PATHS = ("/sdk/latest-all", "/sdk/poll")


@dataclass(frozen=True, slots=True)
class Fault:
    """`latency`: each response chunk is delayed by `delay`; `stall`/`close`: after `after_bytes`
    of the response the proxy stops forwarding (keeping the socket open) or closes it;
    `status`: answers `status` itself (with `Retry-After: retry_after` when given); `reset`:
    TCP reset at once; `blackhole`: reads the request and never answers."""

    kind: FaultKind = "pass"
    delay: float = 0.0
    after_bytes: int = 0
    status: int = 503
    retry_after: int | None = None
    headers: tuple[tuple[str, str], ...] = ()


PASS = Fault()


class FaultProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.requests: Counter[str] = Counter()
        self._rules: list[tuple[tuple[str, ...], Fault]] = []
        self._default = PASS
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fault_for(self, path: str) -> Fault:
        with self._lock:
            for prefixes, fault in self._rules:
                if path.startswith(prefixes):
                    return fault
            return self._default

    def set(self, fault: Fault, *, paths: tuple[str, ...] | None = None, drop: bool = True) -> None:
        """Apply `fault` to requests whose path starts with one of `paths` (all when None);
        `drop` closes open connections so the new rule applies to them at once."""
        with self._lock:
            if paths is None:
                self._rules = []
                self._default = fault
            else:
                self._rules = [(p, f) for p, f in self._rules if p != paths]
                self._rules.insert(0, (paths, fault))
        if drop:
            self.drop_connections()

    def heal(self) -> None:
        self.set(PASS)

    def count(self, *prefixes: str) -> int:
        with self._lock:
            return sum(n for path, n in self.requests.items() if path.startswith(prefixes))

    def drop_connections(self) -> None:
        loop = self._loop
        if loop is None:
            return

        def close_all() -> None:
            for writer in list(self._writers):
                _reset(writer)

        loop.call_soon_threadsafe(close_all)

    # the proxy itself ----------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        pump: asyncio.Task[None] | None = None
        current: list[Fault] = [PASS]
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
                parts = request_line.split(" ")
                path = parts[1].split("?", 1)[0] if len(parts) > 1 else "/"
                with self._lock:
                    self.requests[path] += 1
                fault = self.fault_for(path)
                current[0] = fault
                body = b""
                length = _content_length(head)
                if length:
                    body = await reader.readexactly(length)
                if fault.kind == "reset":
                    _reset(writer)
                    return
                if fault.kind == "blackhole":
                    await reader.read()  # until the client gives up
                    return
                if fault.kind == "status":
                    extra = f"Retry-After: {fault.retry_after}\r\n" if fault.retry_after else ""
                    extra += "".join(f"{name}: {value}\r\n" for name, value in fault.headers)
                    writer.write(
                        (
                            f"HTTP/1.1 {fault.status} Fault\r\nContent-Length: 0\r\n{extra}"
                            "Connection: close\r\n\r\n"
                        ).encode()
                    )
                    await writer.drain()
                    writer.close()
                    return
                if upstream is None:
                    up_reader, upstream = await asyncio.open_connection(
                        "127.0.0.1", self.upstream_port
                    )
                    pump = asyncio.create_task(self._pump(up_reader, writer, current))
                upstream.write(head + body)
                await upstream.drain()
        finally:
            self._writers.discard(writer)
            if pump is not None:
                pump.cancel()
            if upstream is not None:
                upstream.close()
            with contextlib.suppress(Exception):
                writer.close()

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, current: list[Fault]
    ) -> None:
        sent = 0
        try:
            while chunk := await reader.read(65536):
                fault = current[0]
                if fault.kind == "latency":
                    await asyncio.sleep(fault.delay)
                if fault.kind in ("stall", "close"):
                    room = max(0, fault.after_bytes - sent)
                    if len(chunk) > room:
                        writer.write(chunk[:room])
                        await writer.drain()
                        if fault.kind == "close":
                            writer.close()
                            return
                        await asyncio.Event().wait()  # stalled: nothing more, socket kept open
                writer.write(chunk)
                sent += len(chunk)
                await writer.drain()
        except (ConnectionError, RuntimeError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    # lifecycle ---------------------------------------------------------------------------------

    @contextmanager
    def running(self) -> Iterator[FaultProxy]:
        ready = threading.Event()
        stop: list[asyncio.Event] = []

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
            stop.append(asyncio.Event())
            ready.set()
            await stop[0].wait()
            self._server.close()
            for writer in list(self._writers):
                _reset(writer)

        thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
        thread.start()
        wait_until(ready.is_set, what="fault proxy to start")
        try:
            yield self
        finally:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(stop[0].set)
            thread.join(timeout=10)


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip() or 0)
    return 0


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0) rather than an orderly FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(Exception):
        writer.transport.abort()
