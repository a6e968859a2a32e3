"""What the next periodic diagnostic event will say, gathered between two of them on the event
actor's thread: stream attempts, the size of the last batch, since when, and the client's
data-source status read when the event is built. The event's shape is `diagnostic`'s; sending
it is the courier's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from flagstaff_sdk.config import Config
from flagstaff_sdk.events import diagnostic
from flagstaff_sdk.events.control import StreamInit
from flagstaff_sdk.events.options import EventOptions
from flagstaff_sdk.events.stats import StatsCounter
from flagstaff_sdk.status import DataSourceStatus

log = logging.getLogger(__name__)


def _encode(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":"), default=str).encode()


class DiagnosticRecord:
    def __init__(self, config: Config, options: EventOptions, *, now_ms: int) -> None:
        self._config = config
        self._options = options
        self._identity = diagnostic.diagnostic_id(config.sdk_key)
        self._data_since_ms = now_ms
        self.events_in_last_batch = 0
        self._stream_inits: list[dict[str, Any]] = []
        self._data_source: Callable[[], DataSourceStatus] | None = None
        self.reported = False
        """Whether a periodic diagnostic went out (the first goes when a stream attempt ends)."""

    def report_data_source(self, status: Callable[[], DataSourceStatus]) -> None:
        self._data_source = status

    def init_payload(self, now_ms: int) -> bytes:
        """The `diagnostic-init` event, encoded."""
        return _encode(diagnostic.init_event(now_ms, self._identity, self._config, self._options))

    def stream_init(self, attempt: StreamInit) -> None:
        self._stream_inits.append(
            {
                "timestamp": attempt.timestamp_ms,
                "durationMillis": attempt.duration_ms,
                "failed": attempt.failed,
            }
        )

    def _read_data_source(self) -> DataSourceStatus | None:
        status = self._data_source
        if status is None:
            return None
        try:
            return status()
        except Exception:
            # diagnostics must never stop the actor; the event goes without it
            log.exception("reading the data-source status for a diagnostic event failed")
            return None

    def periodic_payload(
        self, now_ms: int, stats: StatsCounter, *, deduplicated: int, closing: bool
    ) -> bytes:
        """The periodic `diagnostic` event, encoded; what it counted starts over."""
        dropped_by_reason = {r.value: n for r, n in stats.snapshot().dropped.items() if n}
        event = diagnostic.periodic_event(
            now_ms,
            self._identity,
            data_since_ms=self._data_since_ms,
            dropped=stats.take_dropped_since_diagnostic(),
            dropped_by_reason=dropped_by_reason,
            deduplicated_contexts=deduplicated,
            events_in_last_batch=self.events_in_last_batch,
            stream_inits=self._stream_inits,
            data_source=self._read_data_source(),
            closing=closing,
        )
        self.reported = True
        self._data_since_ms = now_ms
        self.events_in_last_batch = 0
        self._stream_inits = []
        return _encode(event)
