"""Payload ids acknowledged recently, per environment: a retry of one is answered without a second
append. A bounded, time-windowed map owned by the event loop; rebuilt from the journal on start.
Processing de-duplicates again in the analytics store, so forgetting an id early costs work, never
a double count."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Literal

RecentKey = tuple[str, str, str]
"""(project, environment, payload id)"""


class RecentIds:
    def __init__(self, *, window_ms: int, capacity: int) -> None:
        self.window_ms = window_ms
        self.capacity = capacity
        # insertion order is acknowledgement order, so the oldest entries sit at the front
        self._entries: OrderedDict[RecentKey, tuple[int, asyncio.Future[int] | None]] = (
            OrderedDict()
        )

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, key: RecentKey, now_ms: int) -> asyncio.Future[int] | Literal[False] | None:
        """False when unknown; None when acknowledged; a future while its append is in flight."""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= now_ms - self.window_ms:
            return False
        return entry[1]

    def begin(self, key: RecentKey, now_ms: int, pending: asyncio.Future[int]) -> None:
        self._entries[key] = (now_ms, pending)
        self._entries.move_to_end(key)
        self._trim(now_ms)

    def settle(self, key: RecentKey, *, ok: bool) -> None:
        entry = self._entries.get(key)
        if entry is None:
            return
        if ok:
            self._entries[key] = (entry[0], None)
        else:
            del self._entries[key]

    def remember(self, key: RecentKey, at_ms: int) -> None:
        """An id found in the journal at start."""
        self._entries[key] = (at_ms, None)
        self._entries.move_to_end(key)
        if len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def _trim(self, now_ms: int) -> None:
        horizon = now_ms - self.window_ms
        while self._entries:
            key, (at_ms, pending) = next(iter(self._entries.items()))
            if (at_ms > horizon and len(self._entries) <= self.capacity) or pending is not None:
                break
            del self._entries[key]
