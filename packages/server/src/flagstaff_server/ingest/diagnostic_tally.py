"""Processing math for diagnostic events: what one batch says about each SDK instance (name,
version, wrapper, streaming, platform, dropped events, stream attempts, and Flagstaff's own SDK's
data-source state and closing), merged into the stored row by the store. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flagstaff_server.ingest.fleet import StreamState, fold_inits
from flagstaff_server.ingest.payload_values import (
    MAX_COUNT,
    MAX_MS,
    NAME_CHARS,
    STATE_CHARS,
    as_ms,
    is_text,
    text_or_none,
)
from flagstaff_server.ingest.record import Record

MAX_INITS = 100
"""Stream attempts kept from one batch's reports of one instance (the newest): a report holds
the attempts of one interval, a handful unless the stream flaps."""
InstanceKey = tuple[str, str, str]
"""(project, environment, diagnostic id)"""


@dataclass(slots=True, kw_only=True)
class InstanceReport:
    """What one batch says about one SDK instance; merged into the stored row."""

    sdk_name: str | None = None
    sdk_version: str | None = None
    wrapper: str | None = None
    streaming: bool | None = None
    platform: dict[str, Any] | None = None
    first_ms: int = 0
    """Its earliest report in the batch (0: none yet)."""
    last_ms: int = 0
    dropped_events: int = 0
    data_since_ms: int | None = None
    diagnostic_interval_ms: int | None = None
    inits: list[tuple[int, bool]] = field(default_factory=list)
    """Stream attempts reported (time, succeeded), for `fleet.fold_inits`."""
    stream: StreamState = field(default_factory=StreamState)
    """`inits` folded from nothing (what this batch alone says)."""
    reported_state: str | None = None
    reported_since_ms: int | None = None
    reported_age_ms: int | None = None
    reported_source: str | None = None
    reported_ms: int | None = None
    """Flagstaff's own SDK's `dataSource` in its newest `diagnostic`, and that event's time."""
    stopped_ms: int | None = None
    """The time of a `diagnostic` with `closing: true` newer than every other report."""


def add_diagnostics(
    instances: dict[InstanceKey, InstanceReport], record: Record, events: list[Any]
) -> tuple[int, int, int]:
    """Add a payload's diagnostic events to their instances' reports; returns the span of their
    times and how many events had an unusable shape."""
    first_ms = last_ms = record.received_ms
    skipped = 0
    for event in events:
        created = add_diagnostic(instances, record, event) if isinstance(event, dict) else None
        if created is None:
            skipped += 1
            continue
        first_ms = min(first_ms, created)
        last_ms = max(last_ms, created)
    return first_ms, last_ms, skipped


def add_diagnostic(
    instances: dict[InstanceKey, InstanceReport], record: Record, event: Mapping[str, Any]
) -> int | None:
    """Add one diagnostic event to its SDK instance's report; returns its time (None: the event
    names no usable instance and is skipped)."""
    ident = event.get("id")
    instance_id = ident.get("diagnosticId") if isinstance(ident, dict) else None
    if not is_text(instance_id, NAME_CHARS):
        return None
    created = as_ms(event.get("creationDate"), record.received_ms)
    key = (record.project, record.environment, instance_id)
    report = instances.setdefault(key, InstanceReport())
    report.last_ms = max(report.last_ms, created)
    report.first_ms = min(report.first_ms, created) if report.first_ms else created
    sdk = event.get("sdk")
    if isinstance(sdk, dict):
        report.sdk_name = text_or_none(sdk.get("name"))
        report.sdk_version = text_or_none(sdk.get("version"))
        report.wrapper = text_or_none(sdk.get("wrapperName"))
    configuration = event.get("configuration")
    if isinstance(configuration, dict) and isinstance(configuration.get("streamingDisabled"), bool):
        report.streaming = not configuration["streamingDisabled"]
    platform = event.get("platform")
    if isinstance(platform, dict):
        report.platform = platform
    dropped = event.get("droppedEvents")
    if type(dropped) is int and 0 < dropped <= MAX_COUNT:
        report.dropped_events += dropped
    since = event.get("dataSinceDate")
    if type(since) is int and 0 < since <= MAX_MS:
        report.data_since_ms = since
    if isinstance(configuration, dict):
        interval = configuration.get("diagnosticRecordingIntervalMillis")
        if type(interval) is int and 0 < interval <= MAX_COUNT:
            report.diagnostic_interval_ms = interval
    inits = event.get("streamInits")
    if isinstance(inits, list):
        for init in inits[-MAX_INITS:]:
            if isinstance(init, dict):
                report.inits.append(
                    (as_ms(init.get("timestamp"), created), init.get("failed") is not True)
                )
        del report.inits[:-MAX_INITS]
        report.stream = fold_inits(StreamState(), report.inits)
    if event.get("kind") == "diagnostic" and (
        report.reported_ms is None or created >= report.reported_ms
    ):
        add_reported_state(report, event, created)
    return created


def add_reported_state(report: InstanceReport, event: Mapping[str, Any], created: int) -> None:
    """The newest periodic report's word on the data source and on closing (Flagstaff's own
    SDK's extensions; a LaunchDarkly SDK's report clears them)."""
    source = event.get("dataSource")
    report.reported_ms = created
    report.reported_state = report.reported_source = None
    report.reported_since_ms = report.reported_age_ms = None
    if isinstance(source, dict):
        state, feed = source.get("state"), source.get("source")
        report.reported_state = state if is_text(state, STATE_CHARS) else None
        report.reported_source = feed if is_text(feed, STATE_CHARS) else None
        since, age = source.get("stateSince"), source.get("dataAgeMillis")
        report.reported_since_ms = since if type(since) is int and 0 < since <= MAX_MS else None
        report.reported_age_ms = age if type(age) is int and 0 <= age <= MAX_MS else None
    report.stopped_ms = created if event.get("closing") is True else None
