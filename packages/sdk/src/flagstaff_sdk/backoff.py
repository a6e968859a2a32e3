"""Reconnect delays: doubling with jitter, a slow regime after unexpected statuses, and a reset
after a healthy spell. Pure arithmetic over an injected clock and random source; never sleeps.
"""

from __future__ import annotations

from collections.abc import Callable

from flagstaff_sdk.clock import Clock
from flagstaff_sdk.config import Timing
from flagstaff_sdk.errors import HttpStatusError


class Backoff:
    """`delay()` after each failure; `healthy()` when a connection starts working.

    Normal regime: `min(base * 2**(n-1), max)` minus up to `jitter` of it at random; `base` is
    the initial delay, or the server's SSE `retry:` hint when it sent one. After an unexpected
    status (401, 403, other 4xx) the extended regime (minutes to an hour) applies until the next
    success. A server's `Retry-After` is a floor. Healthy for `reset_after` seconds: the next
    failure starts over from the base delay.
    """

    __slots__ = ("_attempt", "_base", "_clock", "_extended", "_healthy_since", "_random", "_timing")

    def __init__(self, timing: Timing, clock: Clock, random: Callable[[], float]) -> None:
        self._timing = timing
        self._clock = clock
        self._random = random
        self._attempt = 0
        self._base = timing.initial_retry_delay
        self._extended = False
        self._healthy_since: float | None = None

    @property
    def attempt(self) -> int:
        return self._attempt

    @property
    def extended(self) -> bool:
        return self._extended

    def set_base(self, seconds: float) -> None:
        """The server's SSE `retry:` hint replaces the initial delay (capped at the maximum)."""
        self._base = min(max(seconds, 0.0), self._timing.max_retry_delay)

    def healthy(self) -> None:
        if self._healthy_since is None:
            self._healthy_since = self._clock.monotonic()
        self._extended = False

    def delay(self, *, unexpected: bool = False, retry_after: float | None = None) -> float:
        """The wait before the next attempt, after a failure."""
        timing = self._timing
        since = self._healthy_since
        if since is not None and self._clock.monotonic() - since >= timing.reset_after:
            self._attempt = 0
        self._healthy_since = None
        if unexpected:
            if not self._extended:
                self._attempt = 0
            self._extended = True
        self._attempt += 1
        if self._extended:
            base, ceiling = timing.extended_retry_delay, timing.extended_max_retry_delay
        else:
            base, ceiling = self._base, timing.max_retry_delay
        delay: float = min(base * 2 ** min(self._attempt - 1, 62), ceiling)
        delay -= self._random() * timing.jitter * delay
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay

    def delay_after(self, error: BaseException) -> float:
        """The wait after `error`: a status says whether it was unexpected and may carry a
        `Retry-After`; any other error is an ordinary failure."""
        if isinstance(error, HttpStatusError):
            return self.delay(unexpected=not error.recoverable, retry_after=error.retry_after)
        return self.delay()
