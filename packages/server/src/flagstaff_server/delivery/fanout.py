"""Fan-out of stream events: one `Channel` per open stream (a small bounded queue of encoded
bytes) and one `Broadcaster` per environment handing every channel the same bytes object.

A channel that cannot keep up is evicted rather than buffered: memory per stream stays bounded
and one slow client never delays the others. Runs on the event loop only (no locks).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Literal

Protocol = Literal["v1", "v2"]


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


class Broadcaster:
    """The open streams of one environment."""

    __slots__ = ("channels",)

    def __init__(self) -> None:
        self.channels: set[Channel] = set()

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
