"""Slows password guessing: counts failed sign-ins per account (the email) and per client
address in a sliding window, and refuses further attempts on a key that reached its limit until
its oldest counted failure leaves the window.

State is in this process's memory and bounded (at most `limit` timestamps per key and
`max_keys` keys, least recently failed evicted first). Several API nodes each keep their own
counts, so together they allow up to nodes x limit guesses per window; a shared store (Redis,
the database) would be needed to hold one count across nodes. It does no I/O and takes the time
from its caller, so it runs under a fake clock in tests.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timedelta

from flagstaff_server.errors import TooManyAttempts


@dataclass(frozen=True, slots=True, kw_only=True)
class ThrottleLimit:
    """At most `failures` failed sign-ins within `window`; the next is refused."""

    failures: int
    window: timedelta


# An account is a single target: a handful of typos is normal, dozens are guessing.
ACCOUNT_LIMIT = ThrottleLimit(failures=10, window=timedelta(minutes=15))
# One address may sit in front of many people (an office NAT), so it gets more room; it stops
# one machine from trying a few passwords against every account (password spraying).
CLIENT_LIMIT = ThrottleLimit(failures=50, window=timedelta(minutes=15))
MAX_KEYS = 10_000


class SignInThrottle:
    """Failure counts per key (`account:<email>`, `client:<address>`). Thread-safe: sign-ins run
    in the thread pool."""

    def __init__(
        self,
        *,
        account: ThrottleLimit = ACCOUNT_LIMIT,
        client: ThrottleLimit = CLIENT_LIMIT,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self.account = account
        self.client = client
        self.max_keys = max_keys
        self._lock = threading.Lock()
        self._failures: OrderedDict[str, deque[datetime]] = OrderedDict()

    def check(self, *, email: str | None, client: str | None, now: datetime) -> None:
        """Raise `TooManyAttempts` (with the seconds to wait) when the account or the client
        address has used up its failures; a correct password is refused too, else the answer
        would tell a guesser when they found it."""
        waits = [
            self._wait(key, limit, now) for key, limit in self._keys(email=email, client=client)
        ]
        wait = max(waits, default=timedelta(0))
        if wait > timedelta(0):
            seconds = max(1, math.ceil(wait.total_seconds()))
            raise TooManyAttempts(
                f"too many failed sign-ins; try again in {_spoken(seconds)}",
                retry_after=seconds,
            )

    def record_failure(self, *, email: str | None, client: str | None, now: datetime) -> None:
        with self._lock:
            for key, limit in self._keys(email=email, client=client):
                times = self._failures.pop(key, None)
                if times is None:
                    times = deque(maxlen=limit.failures)
                _forget_old(times, limit, now)
                times.append(now)
                self._failures[key] = times  # most recently failed last
            while len(self._failures) > self.max_keys:
                self._failures.popitem(last=False)

    def record_success(self, *, email: str) -> None:
        """A correct password clears the account's count. The address keeps its count, so one
        attacker's own valid account cannot wipe the record of sprays from the same address."""
        with self._lock:
            self._failures.pop(_account_key(email), None)

    def tracked_keys(self) -> int:
        with self._lock:
            return len(self._failures)

    def _keys(self, *, email: str | None, client: str | None) -> list[tuple[str, ThrottleLimit]]:
        keys: list[tuple[str, ThrottleLimit]] = []
        if email is not None:
            keys.append((_account_key(email), self.account))
        if client:
            keys.append((f"client:{client}", self.client))
        return keys

    def _wait(self, key: str, limit: ThrottleLimit, now: datetime) -> timedelta:
        with self._lock:
            times = self._failures.get(key)
            if times is None:
                return timedelta(0)
            _forget_old(times, limit, now)
            if not times:
                del self._failures[key]
                return timedelta(0)
            if len(times) < limit.failures:
                return timedelta(0)
            return times[0] + limit.window - now


def _account_key(email: str) -> str:
    return f"account:{email.strip().lower()}"


def _spoken(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _forget_old(times: deque[datetime], limit: ThrottleLimit, now: datetime) -> None:
    while times and times[0] + limit.window <= now:
        times.popleft()
