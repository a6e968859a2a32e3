"""Counters of what the event processor sent and lost, by reason; read by `event_stats()` and
written into diagnostic events. Thread-safe; must not decide anything.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


class DropReason(enum.Enum):
    QUEUE_FULL = "queue_full"
    """The callers' queue was full: the actor fell behind (nothing waits for it)."""
    CAPACITY = "capacity"
    """The buffer of events between two flushes reached `capacity`."""
    SPOOL_FULL = "spool_full"
    """An undelivered batch was pushed out of the spool by newer ones (oldest first)."""
    DISABLED = "disabled"
    """The events endpoint refused the SDK key (401/403): sending stopped for this client."""
    UNDELIVERED_AT_CLOSE = "undelivered_at_close"
    """Closing with undelivered batches and no spool directory to keep them in."""
    CLOSED = "closed"
    """Recorded after `close()`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventStats:
    """A snapshot: `dropped[reason]` counts events, never payloads."""

    dropped: MappingProxyType[DropReason, int]
    delivered_events: int
    delivered_payloads: int
    failed_attempts: int
    spooled_payloads: int
    spooled_bytes: int
    sampled_out: int
    deduplicated_contexts: int
    disabled: bool
    """True once the endpoint answered 401/403: no more events are sent by this client."""
    last_status: int | None
    endpoint: str | None = None
    """The name of the endpoint (region) that accepted the last payload (`Endpoint.name`)."""

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


@dataclass(slots=True)
class StatsCounter:
    """The live counters behind `EventStats`; every writer takes the lock."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _dropped: dict[DropReason, int] = field(default_factory=lambda: dict.fromkeys(DropReason, 0))
    _dropped_since_diagnostic: int = 0
    delivered_events: int = 0
    delivered_payloads: int = 0
    failed_attempts: int = 0
    spooled_payloads: int = 0
    spooled_bytes: int = 0
    sampled_out: int = 0
    deduplicated_contexts: int = 0
    disabled: bool = False
    last_status: int | None = None
    endpoint: str | None = None

    def drop(self, reason: DropReason, count: int = 1) -> None:
        if count <= 0:
            return
        with self._lock:
            self._dropped[reason] += count
            self._dropped_since_diagnostic += count

    def add(self, name: str, count: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + count)

    def set(self, **values: Any) -> None:
        with self._lock:
            for name, value in values.items():
                setattr(self, name, value)

    def take_dropped_since_diagnostic(self) -> int:
        with self._lock:
            count, self._dropped_since_diagnostic = self._dropped_since_diagnostic, 0
            return count

    def snapshot(self) -> EventStats:
        with self._lock:
            return EventStats(
                dropped=MappingProxyType(dict(self._dropped)),
                delivered_events=self.delivered_events,
                delivered_payloads=self.delivered_payloads,
                failed_attempts=self.failed_attempts,
                spooled_payloads=self.spooled_payloads,
                spooled_bytes=self.spooled_bytes,
                sampled_out=self.sampled_out,
                deduplicated_contexts=self.deduplicated_contexts,
                disabled=self.disabled,
                last_status=self.last_status,
                endpoint=self.endpoint,
            )
