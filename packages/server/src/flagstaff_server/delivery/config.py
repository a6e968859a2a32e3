"""How a delivery node is configured: where snapshots are kept, admission limits, stream timing,
retry hints and feed backoff. Values only; read by the node and by the endpoints it serves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flagstaff_server.delivery.admission import Limits


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryConfig:
    data_dir: Path | None = None
    """Where snapshots are kept across restarts; None keeps them only in memory."""
    limits: Limits = field(default_factory=Limits)
    heartbeat_seconds: float = 55.0
    """Idle streams get a heartbeat after this long (plus at most one tick): under 60 s."""
    tick_seconds: float = 1.0
    retry_hint_ms: int = 1_000
    """The SSE `retry:` hint: base reconnect delay for SDKs (they add backoff and jitter)."""
    channel_limit: int = 64
    """Undelivered events a stream may hold before it is dropped as too slow."""
    log_limit: int = 500
    """Changes remembered per environment for FDv2 deltas."""
    persist_delay_seconds: float = 0.5
    feed_retry_seconds: float = 0.5
    feed_retry_max_seconds: float = 30.0
    probe_interval_seconds: float = 0.5
    probe_timeout_seconds: float = 5.0
