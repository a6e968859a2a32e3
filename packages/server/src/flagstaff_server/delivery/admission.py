"""Admission control for one delivery node: a cap on open streams (and a smaller one on client-side
streams), token buckets on full-payload sends and on fresh client-side evaluations (charged by the
CPU they take), a CPU budget per evaluation request, jittered `Retry-After` values and
connection-age deadlines, with counters for all of it.

Time and randomness are injected, so every decision is testable without sleeping.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    max_streams: int = 20_000
    """Open streams per node; beyond this new streams get 503 and go elsewhere or poll."""
    full_sends_per_second: float = 1_000.0
    """Full data sets (poll 200s, stream `put`s, FDv2 full transfers) per second, sustained."""
    full_send_burst: int = 2_000
    retry_after_seconds: float = 5.0
    """Base of the `Retry-After` a shed request gets; each answer adds up to 100% jitter."""
    max_connection_age_seconds: float = 3_600.0
    """Streams are closed cleanly at about this age so load spreads over nodes added later;
    0 disables it."""
    age_jitter: float = 0.25
    """A stream's age limit is drawn from [age * (1 - jitter), age]."""
    max_client_streams: int = 15_000
    """Browser, mobile and OFREP streams per node (counted within `max_streams` too): a storm
    of browsers cannot take the room server-side SDKs need."""
    evaluations_per_second: float = 1_000.0
    """Client-side answers that need a fresh evaluation (evalx/OFREP 200s not in the cache,
    `eval` stream opens for a new context), sustained. A browser's 50 flags cost about 0.5 ms,
    so this keeps such work near half a core; cache hits and 304s are not counted."""
    evaluation_burst: int = 2_000
    evaluation_token_cpu_seconds: float = 0.0005
    """What one evaluation token buys: a fresh evaluation that takes more CPU than this is
    charged the extra tokens afterwards, so the budget holds for costly contexts too."""
    evaluation_cpu_seconds: float = 0.02
    """The most CPU one request's evaluation may take (checked between flags): a context that
    would take longer is answered 413, and the event loop moves on."""


class TokenBucket:
    """`rate` tokens per second up to `burst`; `take` answers whether one was available."""

    __slots__ = ("burst", "clock", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.tokens = float(burst)
        self.stamp = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class Admission:
    """Decides whether a stream or a full send may go ahead, and counts every decision."""

    def __init__(
        self,
        limits: Limits,
        *,
        clock: Callable[[], float],
        random: Callable[[], float],
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.limits = limits
        self.clock = clock
        self.random = random
        self.cpu_clock = cpu_clock
        """CPU time of the calling thread (the event loop's): what evaluations are charged."""
        self.bucket = TokenBucket(limits.full_sends_per_second, limits.full_send_burst, clock)
        self.evaluations = TokenBucket(
            limits.evaluations_per_second, limits.evaluation_burst, clock
        )
        self.open_streams = 0
        self.open_client_streams = 0
        self.counts: Counter[str] = Counter()
        """Monotonic counters: `stream_shed`, `full_send`, `full_send_shed`, `not_modified`,
        `delta_send`, `evicted`, `aged_out`, ... (exposed on /metrics)."""

    def admit_stream(self) -> bool:
        if self.open_streams >= self.limits.max_streams:
            self.counts["stream_shed"] += 1
            return False
        return True

    def admit_client_stream(self) -> bool:
        """A browser, mobile or OFREP stream: within both the node's and the client-side cap."""
        if self.open_client_streams >= self.limits.max_client_streams:
            self.counts["client_stream_shed"] += 1
            return False
        return self.admit_stream()

    def admit_evaluation(self) -> bool:
        """A client-side answer that must be evaluated afresh (not served from the cache)."""
        if self.evaluations.take():
            self.counts["client_evaluation"] += 1
            return True
        self.counts["client_evaluation_shed"] += 1
        return False

    def evaluation_budget(self) -> Callable[[], bool]:
        """A `keep_going` for one request's evaluation (`flagstaff_core.evaluate_for_client`
        asks it every few flags): false once `evaluation_cpu_seconds` of CPU are used from now."""
        clock = self.cpu_clock
        deadline = clock() + self.limits.evaluation_cpu_seconds
        return lambda: clock() < deadline

    def charge_evaluation(self, cpu_seconds: float) -> None:
        """Charge an admitted evaluation for the CPU it took beyond its one token (the bucket
        may go below zero: fresh evaluations are shed until it refills)."""
        extra = cpu_seconds / self.limits.evaluation_token_cpu_seconds - 1.0
        if extra > 0:
            self.evaluations.tokens -= extra
            self.counts["client_evaluation_extra_tokens"] += round(extra)

    def admit_full_send(self) -> bool:
        if self.bucket.take():
            self.counts["full_send"] += 1
            return True
        self.counts["full_send_shed"] += 1
        return False

    def retry_after(self) -> int:
        """Whole seconds in [base, 2 * base]: shed clients come back spread out, not together."""
        base = self.limits.retry_after_seconds
        return max(1, round(base + base * self.random()))

    def stream_deadline(self) -> float:
        """When a stream opened now should be closed (infinity when ageing is off)."""
        age = self.limits.max_connection_age_seconds
        if age <= 0:
            return float("inf")
        return self.clock() + age * (1.0 - self.limits.age_jitter * self.random())
