"""Processing math: turns a batch of journal records into the increments the analytics store adds
(hourly evaluation counts, flag activity, raw events, contexts seen, SDK instance reports).
Pure: no I/O, no clock; malformed events inside an accepted payload are counted and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from flagstaff_server.ingest.record import Kind, Record

HOUR_MS = 3_600_000
NO_VARIATION = -1
"""The variation recorded when none was chosen (an unknown flag, or an error)."""

CountKey = tuple[str, str, str, int, int]
"""(project, environment, flag key, hour start ms, variation)"""
FlagKey = tuple[str, str, str]
ContextKey = tuple[str, str, str, str]
"""(project, environment, context kind, context key)"""
InstanceKey = tuple[str, str, str]
"""(project, environment, diagnostic id)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomRow:
    """A custom event's name and metric value, kept per event for experiments and guardrails."""

    project: str
    environment: str
    created_ms: int
    key: str
    context_key: str
    metric_value: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyRow:
    """A payload kept raw for export, with the span of its events' creation times."""

    project: str
    environment: str
    first_ms: int
    last_ms: int
    body: bytes


@dataclass(slots=True, kw_only=True)
class InstanceReport:
    """What one batch says about one SDK instance; merged into the stored row."""

    sdk_name: str | None = None
    sdk_version: str | None = None
    wrapper: str | None = None
    streaming: bool | None = None
    platform: dict[str, Any] | None = None
    last_ms: int = 0
    dropped_events: int = 0
    data_since_ms: int | None = None
    stream_init_ms: int | None = None
    stream_ok: bool | None = None
    stream_ok_ms: int | None = None


@dataclass(slots=True)
class Tally:
    counts: dict[CountKey, int] = field(default_factory=dict)
    activity: dict[FlagKey, tuple[int, int]] = field(default_factory=dict)
    """(first, last) evaluation time per flag."""
    customs: list[CustomRow] = field(default_factory=list)
    bodies: list[BodyRow] = field(default_factory=list)
    contexts: dict[ContextKey, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    instances: dict[InstanceKey, InstanceReport] = field(default_factory=dict)
    skipped: int = 0
    """Events inside accepted payloads that had an unusable shape."""
    payloads: int = 0


def hour_of(ms: int) -> int:
    return ms - ms % HOUR_MS


def tally(records: Iterable[Record]) -> Tally:
    result = Tally()
    for record in records:
        result.payloads += 1
        try:
            parsed = orjson.loads(record.payload)
        except orjson.JSONDecodeError:
            # validated before the append; only a changed validator could let one through
            result.skipped += 1
            continue
        events = parsed if isinstance(parsed, list) else [parsed]
        span = [record.received_ms, record.received_ms]
        for event in events:
            if not isinstance(event, dict):
                result.skipped += 1
                continue
            if record.kind == Kind.DIAGNOSTIC:
                created = add_diagnostic(result, record, event)
            else:
                created = add_event(result, record, event)
            if created < span[0]:
                span[0] = created
            if created > span[1]:
                span[1] = created
        result.bodies.append(
            BodyRow(
                project=record.project,
                environment=record.environment,
                first_ms=span[0],
                last_ms=span[1],
                body=record.payload,
            )
        )
    return result


def created_of(event: Mapping[str, Any], fallback: int) -> int:
    """An event's time: `endDate` for a summary, else `creationDate`."""
    if event.get("kind") == "summary":
        return as_ms(event.get("endDate"), fallback)
    return as_ms(event.get("creationDate"), fallback)


def add_event(result: Tally, record: Record, event: Mapping[str, Any]) -> int:
    """Add one analytics event; returns its time."""
    kind = event.get("kind")
    if kind == "summary":
        if not add_summary(result, record, event):
            result.skipped += 1
        return as_ms(event.get("endDate"), record.received_ms)
    created = as_ms(event.get("creationDate"), record.received_ms)
    project, environment = record.project, record.environment
    key = event.get("key")
    if kind in ("feature", "debug") and isinstance(key, str):
        touch(result.activity, (project, environment, key), created)
    first_key = ""
    context = event.get("context")
    if isinstance(context, dict):
        seen_contexts = result.contexts
        for context_kind, context_key, part in context_parts(context):
            first_key = first_key or context_key
            seen = (project, environment, context_kind, context_key)
            previous = seen_contexts.get(seen)
            if previous is None or previous[0] <= created:
                # the single-kind context is built only for the copy that is kept
                seen_contexts[seen] = (created, single_context(context_kind, part))
    keys = event.get("contextKeys")
    if isinstance(keys, dict):
        for context_kind, context_key in keys.items():
            if isinstance(context_key, str):
                first_key = first_key or context_key
                seen = (project, environment, context_kind, context_key)
                if seen not in result.contexts:
                    result.contexts[seen] = (created, {"kind": context_kind, "key": context_key})
    if kind == "custom" and isinstance(key, str):
        metric = event.get("metricValue")
        result.customs.append(
            CustomRow(
                project=project,
                environment=environment,
                created_ms=created,
                key=key,
                context_key=first_key,
                metric_value=float(metric)
                if isinstance(metric, int | float) and not isinstance(metric, bool)
                else None,
            )
        )
    return created


def add_summary(result: Tally, record: Record, event: Mapping[str, Any]) -> bool:
    features = event.get("features")
    if not isinstance(features, dict):
        return False
    end = as_ms(event.get("endDate"), record.received_ms)
    start = as_ms(event.get("startDate"), end)
    hour = hour_of(end)
    for flag_key, summary in features.items():
        if not isinstance(summary, dict):
            continue
        counters = summary.get("counters")
        if not isinstance(counters, list):
            continue
        evaluated = False
        for counter in counters:
            if not isinstance(counter, dict):
                continue
            count = counter.get("count")
            if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
                continue
            variation = counter.get("variation")
            index = (
                variation
                if isinstance(variation, int) and not isinstance(variation, bool)
                else NO_VARIATION
            )
            key = (record.project, record.environment, flag_key, hour, index)
            result.counts[key] = result.counts.get(key, 0) + count
            evaluated = True
        if evaluated:
            flag = (record.project, record.environment, flag_key)
            touch(result.activity, flag, start)
            touch(result.activity, flag, end)
    return True


def add_diagnostic(result: Tally, record: Record, event: Mapping[str, Any]) -> int:
    """Add one diagnostic event to its SDK instance's report; returns its time."""
    ident = event.get("id")
    instance_id = ident.get("diagnosticId") if isinstance(ident, dict) else None
    if not isinstance(instance_id, str):
        result.skipped += 1
        return record.received_ms
    created = as_ms(event.get("creationDate"), record.received_ms)
    key = (record.project, record.environment, instance_id)
    report = result.instances.setdefault(key, InstanceReport())
    report.last_ms = max(report.last_ms, created)
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
    if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
        report.dropped_events += dropped
    since = event.get("dataSinceDate")
    if isinstance(since, int) and not isinstance(since, bool):
        report.data_since_ms = since
    inits = event.get("streamInits")
    if isinstance(inits, list):
        for init in inits:
            if not isinstance(init, dict):
                continue
            at = as_ms(init.get("timestamp"), created)
            ok = init.get("failed") is not True
            if report.stream_init_ms is None or at >= report.stream_init_ms:
                report.stream_init_ms = at
                report.stream_ok = ok
            if ok and (report.stream_ok_ms is None or at > report.stream_ok_ms):
                report.stream_ok_ms = at
    return created


def context_parts(context: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(kind, key, attributes) for each context in a single or multi-kind context; the
    attributes are the part as sent (for a single-kind context, the context itself)."""
    kind = context.get("kind", "user")
    if kind == "multi":
        return [
            (name, part["key"], part)
            for name, part in context.items()
            if name != "kind" and isinstance(part, dict) and isinstance(part.get("key"), str)
        ]
    key = context.get("key")
    if isinstance(kind, str) and isinstance(key, str):
        return [(kind, key, context)]
    return []


def single_context(kind: str, part: Mapping[str, Any]) -> dict[str, Any]:
    """A part of a context as a single-kind context of its own (with its `kind`)."""
    return dict(part) if part.get("kind") == kind else {"kind": kind, **part}


def touch(activity: dict[FlagKey, tuple[int, int]], flag: FlagKey, at: int) -> None:
    previous = activity.get(flag)
    activity[flag] = (at, at) if previous is None else (min(previous[0], at), max(previous[1], at))


def as_ms(value: object, fallback: int) -> int:
    if type(value) is int and value > 0:  # the common case first; a bool is not an int here
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, float) and value > 0:
        return int(value)
    return fallback


def text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
