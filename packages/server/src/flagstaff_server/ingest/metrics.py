"""Prometheus lines for an ingestion node, appended to the node's `/metrics`: payloads accepted,
repeated and refused, the journal's backlog and bytes, processing and the quarantine. Renders the
node's status document it is handed; reads no state itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flagstaff_server.delivery.prometheus import Exposition

PREFIX = "flagstaff_ingest_"


def render(status: Mapping[str, Any]) -> list[str]:
    """`status` is `IngestNode.status()`; a figure it does not hold (no processor here, say) is
    left out rather than reported as 0."""
    exposition = Exposition(PREFIX)

    def metric(name: str, kind: str, help_text: str, key: str) -> None:
        value = status.get(key)
        if value is None:
            return
        exposition.metric(
            name, "counter" if kind == "counter" else "gauge", help_text, [("", value)]
        )

    metric("accepted_total", "counter", "Payloads acknowledged after their fsync.", "accepted")
    metric(
        "duplicates_total",
        "counter",
        "Repeated payload ids answered without an append.",
        "duplicates",
    )
    metric(
        "over_budget_total", "counter", "Payloads refused (503) over the disk budget.", "overBudget"
    )
    metric("durable_seq", "gauge", "Last journal seq known to be on disk.", "durableSeq")
    metric(
        "backlog_records", "gauge", "Durable records not yet processed (or forwarded).", "backlog"
    )
    metric("journal_bytes", "gauge", "Bytes of the journal's segment files.", "journalBytes")
    metric(
        "unprocessed_bytes",
        "gauge",
        "Journal bytes not yet processed (or forwarded): what the disk budget counts.",
        "unprocessedBytes",
    )
    metric(
        "processed_total", "counter", "Payloads processed into the analytics store.", "processed"
    )
    metric(
        "quarantined_total",
        "counter",
        "Payloads this node's processor quarantined because they fail processing on their own.",
        "quarantined",
    )
    metric(
        "quarantine_held",
        "gauge",
        "Payloads held in the analytics store's quarantine (every environment), as last read.",
        "quarantineHeld",
    )
    store = status.get("analyticsStore")
    if store is not None:
        exposition.metric(
            "analytics_store_up",
            "gauge",
            "1 while this node's processor reaches the analytics store.",
            [("", 1 if store == "ok" else 0)],
        )
    return exposition.lines
