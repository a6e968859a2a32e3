"""How an ingestion node is configured: where its journal lives, body and disk limits, and whether
it processes or forwards. Values only; read by the node and by the endpoints (`asgi`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flagstaff_server.ingest.journal_segment import MARK_BYTES

MIN_SEGMENT_BYTES = 1 << 20
"""The smallest journal segment a small disk budget makes (see `IngestConfig.segment_size`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestConfig:
    data_dir: Path
    """Holds the journal (`journal/`) and this node's id (`node-id`)."""
    max_body_bytes: int = 10 << 20
    """Largest accepted body, before and after gzip decompression."""
    disk_budget_bytes: int = 2 << 30
    """Unprocessed (with Redis: unforwarded) journal bytes beyond which new payloads get 503 +
    Retry-After. Processed records are not counted, wherever they still are on disk."""
    segment_bytes: int = 64 << 20
    """Journal segments rotate at this size, or earlier for a small budget (`segment_size`)."""
    retry_after_seconds: int = 5
    dedupe_window_ms: int = 3_600_000
    dedupe_capacity: int = 1_000_000
    process: bool = True
    """Run a processor here (False: this node only journals, and forwards when `redis_url`)."""
    processor_process: bool = False
    """Run the local processor in a process of its own (`processor_process`) rather than a
    thread of this one; `flagstaff serve` does. Without Redis only, and only for a store with
    the standard tally (one handed its own, a test's seam, is processed in this process)."""
    redis_url: str | None = None
    """Scale-out: forward the journal to a Redis stream; processors read it as a group."""

    @property
    def segment_size(self) -> int:
        """Where segments rotate: `segment_bytes`, or half the budget when that is smaller (at
        least `MIN_SEGMENT_BYTES`). Processed records stay on disk until their segment rotates
        and the next release deletes it, so the journal's files stay within about the budget
        plus one segment: 1.5 times the budget, or the budget plus 1 MiB for a tiny one."""
        return min(self.segment_bytes, max(self.disk_budget_bytes // 2, MIN_SEGMENT_BYTES))

    @property
    def mark_spacing(self) -> int:
        """How closely the journal marks where records end: what it may overcount of the backlog
        is below this, so it is kept to a sixteenth of the budget (at most `MARK_BYTES`)."""
        return min(MARK_BYTES, max(self.disk_budget_bytes // 16, 256))
