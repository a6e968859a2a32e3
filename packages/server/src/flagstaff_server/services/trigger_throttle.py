"""Bounds how often flag triggers are called: per trigger (a misbehaving alerting tool) and, for
calls that name no valid trigger, per client address (someone guessing URLs). A sliding window
of timestamps per key, in this process's memory and bounded (`max_keys`, least recently used
evicted); several API nodes each keep their own. No I/O; the time comes from the caller.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timedelta

from flagstaff_server.errors import TooManyAttempts


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimit:
    """At most `calls` within `window`; the next is refused until the oldest leaves it."""

    calls: int
    window: timedelta


# An alert that fires a trigger more than once a second is a loop, not an incident.
TRIGGER_LIMIT = RateLimit(calls=60, window=timedelta(minutes=1))
# A caller naming unknown triggers or wrong secrets is guessing (the secrets are 256 bits).
MISS_LIMIT = RateLimit(calls=20, window=timedelta(minutes=10))
MAX_KEYS = 10_000


class TriggerThrottle:
    """Thread-safe: trigger calls run in the thread pool."""

    def __init__(
        self,
        *,
        trigger: RateLimit = TRIGGER_LIMIT,
        miss: RateLimit = MISS_LIMIT,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.trigger = trigger
        self.miss = miss
        self.max_keys = max_keys
        self._lock = threading.Lock()
        self._calls: OrderedDict[str, deque[datetime]] = OrderedDict()

    def check_client(self, client: str | None, now: datetime) -> None:
        """Refuse a client that used up its misses, before anything is looked up."""
        if client is not None:
            self._refuse_if_full(f"miss:{client}", self.miss, now)

    def missed(self, client: str | None, now: datetime) -> None:
        if client is not None:
            self._count(f"miss:{client}", self.miss, now)

    def call(self, trigger_id: str, now: datetime) -> None:
        """Count a call of a valid trigger; raise `TooManyAttempts` past its limit."""
        key = f"trigger:{trigger_id}"
        self._refuse_if_full(key, self.trigger, now)
        self._count(key, self.trigger, now)

    def _refuse_if_full(self, key: str, limit: RateLimit, now: datetime) -> None:
        with self._lock:
            calls = self._recent(key, limit, now)
            if len(calls) < limit.calls:
                return
            wait = (calls[0] + limit.window - now).total_seconds()
        raise TooManyAttempts(
            "too many trigger calls; try again later", retry_after=max(1, math.ceil(wait))
        )

    def _count(self, key: str, limit: RateLimit, now: datetime) -> None:
        with self._lock:
            calls = self._recent(key, limit, now)
            calls.append(now)
            while len(calls) > limit.calls:
                calls.popleft()
            self._calls[key] = calls
            self._calls.move_to_end(key)
            while len(self._calls) > self.max_keys:
                self._calls.popitem(last=False)

    def _recent(self, key: str, limit: RateLimit, now: datetime) -> deque[datetime]:
        calls = self._calls.get(key, deque())
        while calls and calls[0] <= now - limit.window:
            calls.popleft()
        return calls
