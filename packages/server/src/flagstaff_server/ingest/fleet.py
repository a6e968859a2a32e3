"""The SDK fleet view: one row per SDK instance (diagnostic id) with its data-source state, how
old its flag data is and whether it runs on stale flag data or has stopped; and the fold of
stream connection attempts (diagnostic `streamInits`) into an instance's stream state. Pure;
`now` is passed in (epoch ms).

What the SDKs send (captured in tests/e2e/test_sdk_fleet.py): `diagnostic-init` once at start
(configuration with `streamingDisabled` and `diagnosticRecordingIntervalMillis`), then a
`diagnostic` every interval (900 s by default, 60 s at least for the LaunchDarkly SDKs) with the
stream connection attempts since the last one (`streamInits: [{timestamp, durationMillis,
failed}]`). Flagstaff's own SDK adds `dataSource` (its state, since when, the age of its data,
what feeds it) to each `diagnostic`, sends its first one as soon as its first stream attempt
ends, and a last one with `closing: true` when it closes.

- state, from the newest report: Flagstaff's own SDK's `dataSource.state` (`valid`,
  `interrupted`, `initializing`, `off`); else `valid` when the latest stream attempt succeeded,
  `interrupted` when it failed (the SDK serves the flags it last received), `polling` for
  streaming turned off (a LaunchDarkly SDK says nothing of its polls); `unknown` before the first
  `diagnostic` (`nextReportBy` says when it is due); `stopped` once it said it was closing, or
  after no diagnostic for two of its intervals (one report missed is tolerated: a delivery retry
  or a busy host).
- data age: 0 while valid; for the own SDK otherwise its reported age plus the time since the
  report; for a LaunchDarkly SDK whose stream failed, the time since its first failed reconnect
  after the last success (the stream was lost just before it); unknown (None) otherwise.
- stale flag data: a running instance whose data is over `stale_after_ms` old.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

STALE_AFTER_MS = 5 * 60_000
DEFAULT_INTERVAL_MS = 15 * 60_000
"""The diagnostic interval of an instance that did not say (LaunchDarkly's default)."""
MISSED_REPORTS = 2
"""An instance silent for this many of its diagnostic intervals has stopped."""
REPORTED_STATES = {
    "VALID": "valid",
    "INTERRUPTED": "interrupted",
    "INITIALIZING": "initializing",
    "OFF": "off",
}
"""Flagstaff's own SDK's `dataSource.state` values and the fleet state each one is."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamState:
    init_ms: int | None = None
    """When the latest stream connection attempt was made."""
    ok: bool | None = None
    """Whether that attempt succeeded."""
    ok_ms: int | None = None
    """The latest successful attempt."""
    failed_ms: int | None = None
    """The first failed attempt after the latest success (None while the stream is fine)."""


def fold_inits(state: StreamState, inits: Iterable[tuple[int, bool]]) -> StreamState:
    """`state` after the stream attempts `inits` (time, succeeded), in any order. An attempt
    older than the latest one known changes only the latest success."""
    init_ms, ok, ok_ms, failed_ms = state.init_ms, state.ok, state.ok_ms, state.failed_ms
    for at, succeeded in sorted(inits):
        if succeeded and (ok_ms is None or at > ok_ms):
            ok_ms = at
        if init_ms is not None and at < init_ms:
            continue
        init_ms = at
        if succeeded:
            ok, failed_ms = True, None
        elif ok is not False:
            ok, failed_ms = False, at
    return StreamState(init_ms=init_ms, ok=ok, ok_ms=ok_ms, failed_ms=failed_ms)


def interval_ms(row: Mapping[str, Any]) -> int:
    found = row.get("diagnostic_interval_ms")
    return int(found) if isinstance(found, int) and found > 0 else DEFAULT_INTERVAL_MS


def instance_view(
    row: Mapping[str, Any],
    *,
    now_ms: int,
    stale_after_ms: int = STALE_AFTER_MS,
) -> dict[str, Any]:
    """The fleet row of one stored instance (`ingest_sdk_instances`) at `now_ms`."""
    last_ms = int(row["last_ms"])
    every = interval_ms(row)
    closed = row.get("stopped_ms") is not None
    silent = now_ms - last_ms > MISSED_REPORTS * every
    state, age = _state_and_age(row, now_ms)
    if closed or silent:
        state, age = "stopped", None
    return {
        "instanceId": row["instance_id"],
        "sdk": {"name": row.get("sdk_name"), "version": row.get("sdk_version")},
        "wrapper": row.get("wrapper"),
        "firstSeen": row["first_ms"],
        "lastSeen": last_ms,
        "dataSourceState": state,
        "dataSource": row.get("reported_source"),
        "dataAgeMs": age,
        "droppedEvents": row["dropped_events"],
        "dataSinceDate": row.get("data_since_ms"),
        "diagnosticIntervalMs": every,
        "nextReportBy": None if state == "stopped" else last_ms + every,
        "stopped": state == "stopped",
        "stoppedReason": "closed" if closed else ("silent" if silent else None),
        "staleFlagData": state != "stopped" and age is not None and age > stale_after_ms,
    }


def _state_and_age(row: Mapping[str, Any], now_ms: int) -> tuple[str, int | None]:
    reported = REPORTED_STATES.get(row.get("reported_state") or "")
    if reported is not None:
        if reported == "valid":
            return reported, 0
        age = row.get("reported_age_ms")
        at = row.get("reported_ms")
        if age is None or at is None:
            return reported, None
        return reported, max(0, int(age) + now_ms - int(at))
    if row.get("streaming") is False:
        return "polling", None
    if row.get("stream_ok") is True:
        return "valid", 0
    if row.get("stream_ok") is False:
        lost = row.get("stream_failed_ms") or row.get("stream_ok_ms") or row["first_ms"]
        return "interrupted", max(0, now_ms - int(lost))
    return "unknown", None
