"""The SDK fleet view: one row per SDK instance (diagnostic id) with its data-source state and
flag-data age, and whether it is running on stale flag data. Pure; `now` is passed in (epoch ms).

- state "valid": its latest stream connection attempt succeeded; "interrupted": it failed (the SDK
  serves the flags it last received); "polling": streaming is off; "unknown": no report yet.
- data age: since the last successful stream connection when interrupted, else 0 (a connected
  stream is kept current by the server); unknown (None) for polling or unreported instances.
- stale: interrupted for longer than `stale_after_ms`, or silent (no diagnostic event) for longer
  than `silent_after_ms` (SDKs report every 15 minutes by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STALE_AFTER_MS = 5 * 60_000
SILENT_AFTER_MS = 2 * 15 * 60_000


def instance_view(
    row: Mapping[str, Any],
    *,
    now_ms: int,
    stale_after_ms: int = STALE_AFTER_MS,
    silent_after_ms: int = SILENT_AFTER_MS,
) -> dict[str, Any]:
    stream_ok = row.get("stream_ok")
    if row.get("streaming") is False:
        state = "polling"
    elif stream_ok is True:
        state = "valid"
    elif stream_ok is False:
        state = "interrupted"
    else:
        state = "unknown"
    age: int | None = None
    if state == "valid":
        age = 0
    elif state == "interrupted":
        since = row.get("stream_ok_ms") or row.get("first_ms") or now_ms
        age = max(0, now_ms - int(since))
    silent = now_ms - int(row["last_ms"]) > silent_after_ms
    return {
        "instanceId": row["instance_id"],
        "sdk": {"name": row.get("sdk_name"), "version": row.get("sdk_version")},
        "wrapper": row.get("wrapper"),
        "firstSeen": row["first_ms"],
        "lastSeen": row["last_ms"],
        "dataSourceState": state,
        "dataAgeMs": age,
        "droppedEvents": row["dropped_events"],
        "dataSinceDate": row.get("data_since_ms"),
        "silent": silent,
        "staleFlagData": silent or (age is not None and age > stale_after_ms),
    }
