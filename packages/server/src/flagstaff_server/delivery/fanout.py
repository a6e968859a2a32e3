"""Fan-out of stream events: one `Broadcaster` per environment handing every open stream the same
bytes object. A stream is either a `Channel` (a small bounded queue drained by an ASGI handler) or
a `DirectStream` (writes straight to its connection's transport: no task, no queue). Client-side
streams (`client_stream.Reevaluator`) use the same two kinds.

A stream that cannot keep up is evicted rather than buffered: memory per stream stays bounded
and one slow client never delays the others. Runs on the event loop only (no locks).
"""

from __future__ import annotations

import asyncio
import http
from collections import deque
from collections.abc import Callable, Iterable, Sized
from functools import lru_cache
from typing import Literal
from typing import Protocol as Interface

Protocol = Literal["v1", "v2"]

WRITE_BUFFER_LIMIT = 256 * 1024
"""Unsent bytes (beyond the kernel's socket buffer) a direct stream may hold when an event is
offered before it counts as too slow and is dropped: several full payloads."""


class Stream(Interface):
    """What the broadcaster and the node's housekeeping need from an open stream."""

    @property
    def protocol(self) -> Protocol: ...
    @property
    def closing(self) -> str | None: ...
    @property
    def deadline(self) -> float: ...
    @property
    def last_sent(self) -> float: ...
    @property
    def pending(self) -> Sized: ...
    @property
    def evicted(self) -> bool: ...

    def offer(self, data: bytes) -> bool: ...
    def close(self, reason: str, final: bytes = b"") -> None: ...
    def evict(self) -> None: ...


class Transport(Interface):
    """The part of an asyncio write transport a `DirectStream` uses."""

    def write(self, data: bytes) -> None: ...
    def get_write_buffer_size(self) -> int: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


class Channel:
    """The queue between the broadcaster and one stream's ASGI handler."""

    __slots__ = (
        "closing",
        "deadline",
        "evicted",
        "last_sent",
        "limit",
        "pending",
        "protocol",
        "task",
        "waiter",
    )

    def __init__(self, protocol: Protocol, *, limit: int, deadline: float, now: float) -> None:
        self.protocol: Protocol = protocol
        self.limit = limit
        self.pending: deque[bytes] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.closing: str | None = None
        self.evicted = False
        self.deadline = deadline
        self.last_sent = now
        self.task: asyncio.Task[object] | None = None

    def offer(self, data: bytes) -> bool:
        """Queue `data`; False when the queue is full (the caller evicts the channel)."""
        if self.closing is not None:
            return True
        if len(self.pending) >= self.limit:
            return False
        self.pending.append(data)
        self._wake()
        return True

    def close(self, reason: str, final: bytes = b"") -> None:
        """End the stream after what is queued (plus `final`, e.g. an FDv2 goodbye)."""
        if self.closing is not None:
            return
        self.closing = reason
        if final:
            self.pending.append(final)
        self._wake()

    def evict(self) -> None:
        """Drop a stream that stopped reading: its handler is stuck writing, so cancel it."""
        if self.evicted:
            return
        self.evicted = True
        self.closing = "slow"
        self.pending.clear()
        if self.waiter is not None:
            self._wake()
        elif self.task is not None:
            self.task.cancel()

    async def next(self) -> bytes | None:
        """Everything queued, joined; None once the channel is closing and drained."""
        while not self.pending:
            if self.closing is not None:
                return None
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        if self.evicted:
            return None
        data = b"".join(self.pending) if len(self.pending) > 1 else self.pending[0]
        self.pending.clear()
        return data

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class DirectStream(asyncio.Protocol):
    """A stream that is its connection's protocol: the HTTP layer hands the transport over once
    the response head is written. Events are written as HTTP/1.1 chunks the moment they are
    offered; the disconnect arrives as `connection_lost`. No task, queue or buffer of its own:
    about the size of the transport itself."""

    __slots__ = (
        "clock",
        "closing",
        "deadline",
        "ended",
        "evicted",
        "last_sent",
        "limit",
        "protocol",
        "transport",
    )

    pending: tuple[()] = ()
    """Nothing ever waits here: an offered event is in the transport already."""

    def __init__(
        self,
        protocol: Protocol,
        transport: Transport,
        *,
        limit: int,
        deadline: float,
        clock: Callable[[], float],
        ended: Callable[[DirectStream], None],
    ) -> None:
        self.protocol: Protocol = protocol
        self.transport = transport
        self.limit = limit
        """Unsent bytes the transport may hold when an event is offered before the stream counts
        as too slow (the kernel's socket buffer is full by then)."""
        self.deadline = deadline
        self.clock = clock
        self.ended = ended
        """Called once when the connection is gone: unregisters the stream wherever it was
        registered (a broadcaster, the client re-evaluator) and counts its end."""
        self.closing: str | None = None
        self.evicted = False
        self.last_sent = clock()

    def offer(self, data: bytes) -> bool:
        if self.closing is not None:
            return True
        if self.transport.get_write_buffer_size() > self.limit:
            return False
        self.transport.write(chunk(data))
        self.last_sent = self.clock()
        return True

    def close(self, reason: str, final: bytes = b"") -> None:
        if self.closing is not None:
            return
        self.closing = reason
        self.transport.write(chunk(final) + LAST_CHUNK if final else LAST_CHUNK)
        self.transport.close()

    def evict(self) -> None:
        if self.evicted:
            return
        self.evicted = True
        self.closing = "slow"
        self.transport.abort()

    # asyncio.Protocol -----------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        """SDKs send nothing on a stream; anything else (a pipelined request) is not served."""

    def connection_lost(self, exc: Exception | None) -> None:
        if self.closing is None:
            self.closing = "disconnected"
        self.ended(self)


LAST_CHUNK = b"0\r\n\r\n"

DIRECT_FRAMING: tuple[tuple[bytes, bytes], ...] = (
    (b"transfer-encoding", b"chunked"),
    (b"connection", b"close"),
)
"""The framing headers of a stream served on the connection. The connection ends with the stream
(`DirectStream.close` closes it after the last chunk), so the response says so: without
`connection: close` a client may put the connection back in its pool after the last chunk and
send its next request into a socket the server is closing."""


def response_head(status: int, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """An HTTP/1.1 response's status line and headers, for a response written by hand."""
    lines = [b"HTTP/1.1 %d %b\r\n" % (status, http.HTTPStatus(status).phrase.encode())]
    for name, value in headers:
        lines += (name, b": ", value, b"\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


@lru_cache(maxsize=8)
def chunk(data: bytes) -> bytes:
    """`data` as one HTTP/1.1 chunk. Cached: every stream of an environment is offered the very
    same event object, so it is framed once per change instead of once per stream."""
    return b"%x\r\n%b\r\n" % (len(data), data)


class Broadcaster:
    """The open streams of one environment."""

    __slots__ = ("channels",)

    def __init__(self) -> None:
        self.channels: set[Stream] = set()

    def publish(self, v1_event: bytes, v2_event: bytes) -> int:
        """Hand one change to every stream; returns how many slow streams were evicted."""
        evicted = 0
        for channel in self.channels:
            if not channel.offer(v1_event if channel.protocol == "v1" else v2_event):
                channel.evict()
                evicted += 1
        return evicted

    def close_all(self, reason: str, v2_final: bytes = b"") -> None:
        for channel in self.channels:
            channel.close(reason, v2_final if channel.protocol == "v2" else b"")
