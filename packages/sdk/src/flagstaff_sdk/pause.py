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
            # FIRST_COMPLETED: asyncio.wait's default (ALL_COMPLETED) slept on until every event
            # was set, so a pause was never cut short (a poller paused for an hour while its
            # stream was healthy did not wake when the stream was lost)
            await asyncio.wait(
                waiters, timeout=max(seconds, 0.0), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
