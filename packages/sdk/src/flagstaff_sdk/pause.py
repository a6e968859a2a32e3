"""The actor's one way to wait: a number of seconds on its loop, cut short when the client stops
or when one of the given events is set. Never sleeps past a stop.
"""

from __future__ import annotations

import asyncio


class Pause:
    def __init__(self, stopping: asyncio.Event) -> None:
        self._stopping = stopping

    async def __call__(self, seconds: float, *events: asyncio.Event) -> None:
        waiters = [asyncio.ensure_future(e.wait()) for e in (self._stopping, *events)]
        try:
            await asyncio.wait(waiters, timeout=max(seconds, 0.0))
        finally:
            for waiter in waiters:
                waiter.cancel()
