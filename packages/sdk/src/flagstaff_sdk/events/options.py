"""How the event processor behaves: capacities, intervals, privacy, retries and the spool.

Values only, validated when built; must not start threads or touch the network or disk.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from flagstaff_sdk.errors import ConfigError


@dataclass(frozen=True, slots=True, kw_only=True)
class EventOptions:
    """Defaults follow LaunchDarkly's Python SDK where it has the setting.

    `capacity`: events (feature, custom, identify, index, debug) buffered between flushes; beyond
    it events are dropped and counted. `queue_capacity`: calls (evaluations, custom events,
    identifies) waiting for the actor; a caller never waits, a call beyond it is dropped and
    counted.
    `private_attributes`: attribute references (`email`, `/address/street`) removed from every
    context in events; `all_attributes_private` removes every attribute but key, kind, anonymous.
    `omit_anonymous_contexts`: anonymous contexts never appear in index or identify events.
    `spool_dir`: where batches that could not be delivered wait (bounded by `spool_max_bytes`,
    oldest dropped first); None keeps them in memory (same bound) and loses them on exit.
    `retry_delays`: waits between attempts of one delivery cycle (LaunchDarkly: one retry after
    1 s); afterwards the batch waits in the spool and is retried after `spool_retry_interval`
    (doubling up to `spool_retry_max`).
    """

    capacity: int = 10_000
    queue_capacity: int = 100_000
    flush_interval: float = 5.0
    context_keys_capacity: int = 1_000
    context_keys_flush_interval: float = 300.0
    private_attributes: tuple[str, ...] = ()
    all_attributes_private: bool = False
    omit_anonymous_contexts: bool = False
    compress: bool = False
    diagnostic_opt_out: bool = False
    diagnostic_interval: float = 900.0
    retry_delays: tuple[float, ...] = (1.0, 2.0, 4.0)
    spool_dir: Path | None = None
    spool_max_bytes: int = 8 * 1024 * 1024
    spool_retry_interval: float = 5.0
    spool_retry_max: float = 300.0
    close_timeout: float = 5.0
    drain_interval: float = 0.1
    """How often the actor empties the callers' queue when nothing else wakes it; evaluations
    are timestamped with the clock as the actor last read it, so at most this late."""
    random: Callable[[], float] = random.random
    """Sampling draws; tests pass a seeded generator's `random`."""
    transport: httpx.BaseTransport | None = None
    """For tests: an httpx transport instead of the network."""

    def __post_init__(self) -> None:
        if min(self.capacity, self.queue_capacity, self.context_keys_capacity) < 1:
            raise ConfigError(
                "EventOptions.capacity, queue_capacity and context_keys_capacity must be >= 1"
            )
        for name in (
            "flush_interval",
            "context_keys_flush_interval",
            "diagnostic_interval",
            "spool_retry_interval",
            "spool_retry_max",
            "drain_interval",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"EventOptions.{name} must be positive")
        if self.close_timeout < 0 or any(delay < 0 for delay in self.retry_delays):
            raise ConfigError("EventOptions.close_timeout and retry_delays must be >= 0")
        if self.spool_max_bytes < 0:
            raise ConfigError("EventOptions.spool_max_bytes must be >= 0")
        object.__setattr__(self, "private_attributes", tuple(self.private_attributes))
        object.__setattr__(self, "retry_delays", tuple(self.retry_delays))
        if self.spool_dir is not None:
            object.__setattr__(self, "spool_dir", Path(self.spool_dir))
