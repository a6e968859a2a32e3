"""Processing math: turns a batch of journal records into the increments the analytics store adds
(hourly evaluation counts, flag activity, custom events, raw events, contexts seen; SDK instance
reports from diagnostic events are `diagnostic_tally`'s). Pure: no I/O, no clock; malformed
events inside an accepted payload are counted and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from flagstaff_server.ingest.diagnostic_tally import InstanceKey, InstanceReport, add_diagnostics
from flagstaff_server.ingest.payload_values import (
    CONTEXT_KEY_CHARS,
    KEY_CHARS,
    MAX_COUNT,
    MAX_MS,
    NAME_CHARS,
    as_ms,
    hour_of,
    is_text,
    load_payload,
)
from flagstaff_server.ingest.record import Kind, Record

NO_VARIATION = -1
"""The variation recorded when none was chosen (an unknown flag, or an error)."""
CountKey = tuple[str, str, str, int, int]
"""(project, environment, flag key, hour start ms, variation)"""
FlagKey = tuple[str, str, str]
ContextKey = tuple[str, str, str, str]
"""(project, environment, context kind, context key)"""
ExposureKey = tuple[str, str, str, int, str, str]
"""(project, environment, flag key, flag version, context kind, context key)"""
KeptContext = tuple[int, Mapping[str, Any] | None]
"""A context's newest event time and its part as sent (None: known by `contextKeys` only)."""


class CustomRow(NamedTuple):
    """A custom event's name and metric value, kept per event for experiments and guardrails.
    A named tuple, not a frozen dataclass: a busy batch makes one per custom event, and the
    store hands the rows to the driver as they are (fields in the table's column order)."""

    project: str
    environment: str
    created_ms: int
    key: str
    context_key: str
    metric_value: float | None


class BodyRow(NamedTuple):
    """A payload kept raw for export, with the span of its events' creation times (a named tuple
    in the table's column order, like `CustomRow`)."""

    project: str
    environment: str
    first_ms: int
    last_ms: int
    body: bytes


@dataclass(slots=True)
class Tally:
    counts: dict[CountKey, int] = field(default_factory=dict)
    activity: dict[FlagKey, tuple[int, int]] = field(default_factory=dict)
    """(first, last) evaluation time per flag."""
    customs: list[CustomRow] = field(default_factory=list)
    bodies: list[BodyRow] = field(default_factory=list)
    contexts: dict[ContextKey, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    instances: dict[InstanceKey, InstanceReport] = field(default_factory=dict)
    exposures: dict[ExposureKey, tuple[int, int]] = field(default_factory=dict)
    """(first time, variation) per unit exposed to an experiment (docs/experiments.md)."""
    skipped: int = 0
    """Events inside accepted payloads that had an unusable shape."""
    payloads: int = 0


def tally(records: Iterable[Record]) -> Tally:
    result = Tally()
    kept: dict[ContextKey, KeptContext] = {}
    for record in records:
        result.payloads += 1
        parsed = load_payload(record.payload)
        if parsed is None:  # not JSON: acceptance lets none through, unless it changes
            result.skipped += 1
            continue
        events = parsed if isinstance(parsed, list) else [parsed]
        if record.kind == Kind.DIAGNOSTIC:
            first_ms, last_ms, skipped = add_diagnostics(result.instances, record, events)
            result.skipped += skipped
        else:
            first_ms, last_ms = add_events(result, kept, record, events)
        result.bodies.append(
            BodyRow(record.project, record.environment, first_ms, last_ms, record.payload)
        )
    result.contexts = {
        seen: (
            at,
            {"kind": seen[2], "key": seen[3]} if part is None else single_context(seen[2], part),
        )
        for seen, (at, part) in kept.items()
    }
    return result


def add_events(
    result: Tally, kept: dict[ContextKey, KeptContext], record: Record, events: list[Any]
) -> tuple[int, int]:
    """Add a payload's analytics events; returns the span of their times. The contexts seen go to
    `kept`, each with the event time and the part as sent, made single-kind only once a batch is
    done (for the copy that is kept, not for every event that names it)."""
    project, environment, received = record.project, record.environment, record.received_ms
    first_ms = last_ms = received
    activity, customs = result.activity, result.customs
    for event in events:
        if not isinstance(event, dict):
            result.skipped += 1
            continue
        kind = event.get("kind")
        if kind == "summary":
            if not add_summary(result, record, event):
                result.skipped += 1
            created = as_ms(event.get("endDate"), received)
        else:
            at = event.get("creationDate")
            # the common case first: a positive int (a bool is not an int here)
            created = at if type(at) is int and 0 < at <= MAX_MS else as_ms(at, received)
            key = event.get("key")
            if (kind == "feature" or kind == "debug") and is_text(key, KEY_CHARS):
                flag = (project, environment, key)
                span = activity.get(flag)
                if span is None:
                    activity[flag] = (created, created)
                elif created < span[0] or created > span[1]:  # else already within the span
                    activity[flag] = (min(span[0], created), max(span[1], created))
            if kind == "feature" and is_text(key, KEY_CHARS):
                add_exposure(result.exposures, project, environment, key, created, event)
            first_key = ""
            context = event.get("context")
            if isinstance(context, dict):
                context_kind = context.get("kind", "user")
                if context_kind == "multi":
                    for part_kind, part_key, part in context_parts(context):
                        first_key = first_key or part_key
                        keep(kept, (project, environment, part_kind, part_key), created, part)
                else:
                    context_key = context.get("key")
                    if is_text(context_kind, NAME_CHARS) and is_text(
                        context_key, CONTEXT_KEY_CHARS
                    ):
                        first_key = context_key
                        seen = (project, environment, context_kind, context_key)
                        previous = kept.get(seen)
                        if previous is None or previous[0] <= created:
                            kept[seen] = (created, context)
            keys = event.get("contextKeys")
            if isinstance(keys, dict):
                for context_kind, context_key in keys.items():
                    if is_text(context_kind, NAME_CHARS) and is_text(
                        context_key, CONTEXT_KEY_CHARS
                    ):
                        first_key = first_key or context_key
                        seen = (project, environment, context_kind, context_key)
                        if seen not in kept:
                            kept[seen] = (created, None)
            if kind == "custom" and is_text(key, KEY_CHARS):
                metric = event.get("metricValue")
                value = (
                    float(metric)
                    if isinstance(metric, int | float) and not isinstance(metric, bool)
                    else None
                )
                customs.append(CustomRow(project, environment, created, key, first_key, value))
        if created < first_ms:
            first_ms = created
        elif created > last_ms:
            last_ms = created
    return first_ms, last_ms


def add_exposure(
    exposures: dict[ExposureKey, tuple[int, int]],
    project: str,
    environment: str,
    flag: str,
    created: int,
    event: Mapping[str, Any],
) -> None:
    """A feature event whose reason says `inExperiment` exposes each of its contexts (every
    kind of a multi-kind context) to the variation served; the earliest exposure is kept."""
    reason = event.get("reason")
    if not isinstance(reason, dict) or reason.get("inExperiment") is not True:
        return
    variation, version = event.get("variation"), event.get("version")
    if type(variation) is not int or not 0 <= variation <= MAX_COUNT:
        return
    if type(version) is not int or not 0 <= version <= MAX_COUNT:
        return
    parts: list[tuple[str, str]] = []
    context = event.get("context")
    if isinstance(context, dict):
        parts = [(kind, key) for kind, key, _ in context_parts(context)]
    keys = event.get("contextKeys")
    if not parts and isinstance(keys, dict):
        parts = [
            (kind, key)
            for kind, key in keys.items()
            if is_text(kind, NAME_CHARS) and is_text(key, CONTEXT_KEY_CHARS)
        ]
    for context_kind, context_key in parts:
        unit = (project, environment, flag, version, context_kind, context_key)
        known = exposures.get(unit)
        if known is None or created < known[0]:
            exposures[unit] = (created, variation)


def keep(
    kept: dict[ContextKey, KeptContext], seen: ContextKey, at: int, part: Mapping[str, Any]
) -> None:
    """Keep a context's attributes as of its newest event (the later of equal times)."""
    previous = kept.get(seen)
    if previous is None or previous[0] <= at:
        kept[seen] = (at, part)


def add_summary(result: Tally, record: Record, event: Mapping[str, Any]) -> bool:
    features = event.get("features")
    if not isinstance(features, dict):
        return False
    end = as_ms(event.get("endDate"), record.received_ms)
    start = as_ms(event.get("startDate"), end)
    hour = hour_of(end)
    for flag_key, summary in features.items():
        if not isinstance(summary, dict) or not is_text(flag_key, KEY_CHARS):
            continue
        counters = summary.get("counters")
        if not isinstance(counters, list):
            continue
        evaluated = False
        for counter in counters:
            if not isinstance(counter, dict):
                continue
            count = counter.get("count")
            if type(count) is not int or not 0 < count <= MAX_COUNT:  # a bool is not an int here
                continue
            variation = counter.get("variation")
            if type(variation) is not int or not 0 <= variation <= MAX_COUNT:
                variation = NO_VARIATION
            key = (record.project, record.environment, flag_key, hour, variation)
            result.counts[key] = result.counts.get(key, 0) + count
            evaluated = True
        if evaluated:
            flag = (record.project, record.environment, flag_key)
            touch(result.activity, flag, start)
            touch(result.activity, flag, end)
    return True


def context_parts(context: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(kind, key, attributes) for each context in a single or multi-kind context; the
    attributes are the part as sent (for a single-kind context, the context itself)."""
    kind = context.get("kind", "user")
    if kind == "multi":
        return [
            (name, part["key"], part)
            for name, part in context.items()
            if name != "kind"
            and is_text(name, NAME_CHARS)
            and isinstance(part, dict)
            and is_text(part.get("key"), CONTEXT_KEY_CHARS)
        ]
    key = context.get("key")
    if is_text(kind, NAME_CHARS) and is_text(key, CONTEXT_KEY_CHARS):
        return [(kind, key, context)]
    return []


def single_context(kind: str, part: Mapping[str, Any]) -> dict[str, Any]:
    """A part of a context as a single-kind context of its own (with its `kind`)."""
    return dict(part) if part.get("kind") == kind else {"kind": kind, **part}


def touch(activity: dict[FlagKey, tuple[int, int]], flag: FlagKey, at: int) -> None:
    previous = activity.get(flag)
    activity[flag] = (at, at) if previous is None else (min(previous[0], at), max(previous[1], at))
