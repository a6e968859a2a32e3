"""A TCP fault proxy on loopback: sits in front of a server (a delivery node, an ingest node, a
PostgreSQL primary's replication port) and passes traffic or injects a fault: latency, a reset,
a stall or a close mid-stream, an error status with optional Retry-After, a blackhole, a
partition that silently drops what flows on connections already open.

In HTTP mode the fault is chosen per request path (streams and polls can be cut apart); in TCP
mode (PostgreSQL) one fault applies to whole connections. It runs its own asyncio loop in a
thread, so synchronous callers (tests, the game-day runner) steer it with plain calls. It never
touches anything but the port it was given.
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

from flagstaff_server.gameday.limits import event_loop_factory
from flagstaff_server.regions.postgres_cluster import free_port

FaultKind = Literal["pass", "latency", "reset", "stall", "close", "status", "blackhole"]

STREAM_PATHS = ("/all", "/sdk/stream")
POLL_PATHS = ("/sdk/latest-all", "/sdk/poll")
_START_SECONDS = 10.0
LISTEN_BACKLOG = 4096
"""Connections the kernel queues before the proxy accepts them (asyncio's default is 100):
a reconnect storm of thousands of clients arrives within a second (capped by somaxconn)."""


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
    """Listens on `port` (a free one by default) and forwards to `upstream_port` on loopback.
    `http=False` forwards raw bytes (no request parsing), for a database link."""

    def __init__(
        self, upstream_port: int, *, http: bool = True, port: int | None = None, name: str = ""
    ) -> None:
        self.upstream_port = upstream_port
        self.http = http
        self.port = port or free_port()
        self.name = name or f"proxy:{self.upstream_port}"
        self.requests: Counter[str] = Counter()
        self.connections = 0
        """Connections accepted since the start."""
        self.failures: Counter[str] = Counter()
        """What went wrong, by kind: `accept <error>` (the listener could not accept), or
        the class of the error that ended a connection (upstream refused, reset...)."""
        self._rules: list[tuple[tuple[str, ...], Fault]] = []
        self._default = PASS
        self._partitioned = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[object]] = set()
        self._lock = threading.Lock()
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def open_connections(self) -> int:
        return len(self._writers)

    def fault_for(self, path: str) -> Fault:
        with self._lock:
            for prefixes, fault in self._rules:
                if path.startswith(prefixes):
                    return fault
            return self._default

    def set(self, fault: Fault, *, paths: tuple[str, ...] | None = None, drop: bool = True) -> None:
        """Apply `fault` to requests whose path starts with one of `paths` (all when None);
        `drop` resets open connections so the new rule applies to them at once."""
        with self._lock:
            if paths is None:
                self._rules = []
                self._default = fault
            else:
                self._rules = [(p, f) for p, f in self._rules if p != paths]
                self._rules.insert(0, (paths, fault))
        if drop:
            self.drop_connections()

    def retarget(self, upstream_port: int) -> None:
        """Forward new connections to `upstream_port` (a load balancer moved to another node)
        and reset the open ones, so every client reconnects there."""
        with self._lock:
            self.upstream_port = upstream_port
        self.drop_connections()

    def partition(self) -> None:
        """A network partition: new connections are blackholed and whatever flows on the open
        ones is dropped without a reset, as when packets stop arriving."""
        with self._lock:
            self._partitioned = True
            self._rules = []
            self._default = Fault("blackhole")

    def heal(self) -> None:
        """Back to passing everything. Connections held through a partition are reset, as a
        peer's TCP stack would once packets flow again and it finds data it never acknowledged."""
        with self._lock:
            was_partitioned = self._partitioned
            self._partitioned = False
        self.set(PASS, drop=was_partitioned)

    def count(self, *prefixes: str) -> int:
        with self._lock:
            return sum(n for path, n in self.requests.items() if path.startswith(prefixes))

    def drop_connections(self) -> None:
        """Reset every open connection (long-lived streams included)."""
        loop = self._loop
        if loop is None:
            return

        def reset_all() -> None:
            for writer in list(self._writers):
                _reset(writer)

        loop.call_soon_threadsafe(reset_all)

    # the proxy itself ----------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        with self._lock:
            self.connections += 1
        try:
            if self.http:
                await self._handle_http(reader, writer)
            else:
                await self._handle_tcp(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as exc:
            with self._lock:
                self.failures[type(exc).__name__] += 1
            return
        finally:
            self._writers.discard(writer)
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        fault = self.fault_for("")
        if fault.kind == "reset":
            _reset(writer)
            return
        if fault.kind in ("blackhole", "stall", "status"):
            while await reader.read(65536):
                pass
            return
        up_reader, upstream = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        current = [fault]
        pumps = [
            asyncio.create_task(self._pump(up_reader, writer, current)),
            asyncio.create_task(self._pump(reader, upstream, [PASS])),
        ]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            upstream.close()

    async def _handle_http(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        upstream: asyncio.StreamWriter | None = None
        pump: asyncio.Task[None] | None = None
        current: list[Fault] = [PASS]
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                path = _request_path(head)
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
                    writer.write(_status_response(fault))
                    await writer.drain()
                    return
                if upstream is None:
                    up_reader, upstream = await asyncio.open_connection(
                        "127.0.0.1", self.upstream_port
                    )
                    pump = asyncio.create_task(self._pump(up_reader, writer, current))
                upstream.write(head + body)
                await upstream.drain()
        finally:
            if pump is not None:
                pump.cancel()
            if upstream is not None:
                upstream.close()

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, current: list[Fault]
    ) -> None:
        sent = 0
        try:
            while chunk := await reader.read(65536):
                if self._partitioned:
                    continue  # dropped on the floor: no reset, no answer
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
        except (ConnectionError, RuntimeError, OSError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Listen (in a thread of its own) and return once the port accepts connections."""
        ready = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._loop.set_exception_handler(self._loop_error)
            self._stop = asyncio.Event()
            try:
                server = await asyncio.start_server(
                    self._handle, "127.0.0.1", self.port, backlog=LISTEN_BACKLOG
                )
            except OSError as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            await self._stop.wait()
            server.close()
            for writer in list(self._writers):
                _reset(writer)
            # handlers end here, not cancelled by asyncio.run's teardown (which logs them)
            for handler in list(self._tasks):
                handler.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        def serve() -> None:
            with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
                runner.run(main())

        self._thread = threading.Thread(target=serve, daemon=True, name=self.name)
        self._thread.start()
        if not ready.wait(_START_SECONDS):
            raise RuntimeError(f"{self.name} did not start within {_START_SECONDS}s")
        if failure:
            raise RuntimeError(f"{self.name} could not listen on {self.port}: {failure[0]}")
        return self

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        """asyncio reports a failed accept (out of descriptors: it stops accepting for a
        second) to the loop's handler; count it, and pass everything else on."""
        error = context.get("exception")
        if "accept" in str(context.get("message", "")):
            with self._lock:
                self.failures[f"accept {type(error).__name__}"] += 1
            return
        loop.default_exception_handler(context)

    def close(self) -> None:
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is None or stop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop already ended
            loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
        self._loop = None

    @contextmanager
    def running(self) -> Iterator[FaultProxy]:
        self.start()
        try:
            yield self
        finally:
            self.close()


def _request_path(head: bytes) -> str:
    parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
    return parts[1].split("?", 1)[0] if len(parts) > 1 else "/"


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip() or 0)
    return 0


def _status_response(fault: Fault) -> bytes:
    extra = f"Retry-After: {fault.retry_after}\r\n" if fault.retry_after else ""
    extra += "".join(f"{name}: {value}\r\n" for name, value in fault.headers)
    return (
        f"HTTP/1.1 {fault.status} Fault\r\nContent-Length: 0\r\n{extra}Connection: close\r\n\r\n"
    ).encode()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0) rather than an orderly FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(Exception):
        writer.transport.abort()
