"""Processing math: turns a batch of journal records into the increments the analytics store adds
(hourly evaluation counts, flag activity, raw events, contexts seen, SDK instance reports).
Pure: no I/O, no clock; malformed events inside an accepted payload are counted and skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, TypeGuard

import orjson

from flagstaff_server.domain.document import KEY_MAX_LENGTH
from flagstaff_server.ingest.fleet import StreamState, fold_inits
from flagstaff_server.ingest.record import Kind, Record

HOUR_MS = 3_600_000
MAX_MS = 253_402_300_799_999
"""The last millisecond of the year 9999: a time past it (or not positive) is replaced by the
payload's receive time, as a missing one is."""
MAX_COUNT = 2**31 - 1
"""The largest summary counter or dropped-event count taken from one event; a larger one is
malformed. It keeps every stored sum far inside a 64-bit column: one hour's row of a flag and
variation would need more than 4 billion such counters to reach it."""
NO_VARIATION = -1
"""The variation recorded when none was chosen (an unknown flag, or an error)."""
MAX_INITS = 100
"""Stream attempts kept from one batch's reports of one instance (the newest): a report holds
the attempts of one interval, a handful unless the stream flaps."""
STATE_CHARS = 32
"""The longest `dataSource.state` or `.source` kept (the SDK's values are short words)."""
KEY_CHARS: Final = KEY_MAX_LENGTH
"""The longest project, environment, flag or custom event key kept: the management API's limit
on keys (a longer flag key names no flag). The analytics columns that hold keys are this wide."""
NAME_CHARS: Final = 255
"""The longest context kind, diagnostic id, SDK name, version or wrapper kept (their columns'
width); an event with a longer one is skipped, or keeps no name, as with a malformed one."""
CONTEXT_KEY_CHARS: Final = 1024
"""The longest context key kept (its columns' width)."""

CountKey = tuple[str, str, str, int, int]
"""(project, environment, flag key, hour start ms, variation)"""
FlagKey = tuple[str, str, str]
ContextKey = tuple[str, str, str, str]
"""(project, environment, context kind, context key)"""
InstanceKey = tuple[str, str, str]
"""(project, environment, diagnostic id)"""
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


def load_payload(payload: bytes) -> Any:
    """A stored payload's JSON (None if it is not JSON at all)."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        return lenient_loads(payload)


def lenient_loads(payload: bytes) -> Any:
    """A payload that orjson refuses although acceptance let it in: valid JSON holding a number
    no 64-bit value can hold (`1e400`, a 30-digit integer), in a member acceptance skipped. Read
    with such numbers as null, so the payload's other events still count and everything kept
    can be stored and exported. None if it is not JSON at all."""
    try:
        return json.loads(payload, parse_int=_bounded_int, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return None


def _bounded_int(text: str) -> int | None:
    if len(text) > 21:  # past any 64-bit value, and never hits int()'s digit limit
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**64 else None


def _finite_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def hour_of(ms: int) -> int:
    return ms - ms % HOUR_MS


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
            first_ms, last_ms = add_diagnostics(result, record, events)
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


def add_diagnostics(result: Tally, record: Record, events: list[Any]) -> tuple[int, int]:
    """Add a payload's diagnostic events; returns the span of their times."""
    first_ms = last_ms = record.received_ms
    for event in events:
        if not isinstance(event, dict):
            result.skipped += 1
            continue
        created = add_diagnostic(result, record, event)
        first_ms = min(first_ms, created)
        last_ms = max(last_ms, created)
    return first_ms, last_ms


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


def keep(
    kept: dict[ContextKey, KeptContext], seen: ContextKey, at: int, part: Mapping[str, Any]
) -> None:
    """Keep a context's attributes as of its newest event (the later of equal times)."""
    previous = kept.get(seen)
    if previous is None or previous[0] <= at:
        kept[seen] = (at, part)


def created_of(event: Mapping[str, Any], fallback: int) -> int:
    """An event's time: `endDate` for a summary, else `creationDate`."""
    if event.get("kind") == "summary":
        return as_ms(event.get("endDate"), fallback)
    return as_ms(event.get("creationDate"), fallback)


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


def add_diagnostic(result: Tally, record: Record, event: Mapping[str, Any]) -> int:
    """Add one diagnostic event to its SDK instance's report; returns its time."""
    ident = event.get("id")
    instance_id = ident.get("diagnosticId") if isinstance(ident, dict) else None
    if not is_text(instance_id, NAME_CHARS):
        result.skipped += 1
        return record.received_ms
    created = as_ms(event.get("creationDate"), record.received_ms)
    key = (record.project, record.environment, instance_id)
    report = result.instances.setdefault(key, InstanceReport())
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


def as_ms(value: object, fallback: int) -> int:
    """A time in epoch milliseconds from an event, or `fallback` when it is missing or outside
    (0, MAX_MS]. JSON numbers are exactly int or float (a bool is neither here)."""
    if type(value) is int:
        return value if 0 < value <= MAX_MS else fallback
    if type(value) is float and 0 < value <= MAX_MS:
        return int(value)
    return fallback


def text_or_none(value: object) -> str | None:
    return value if is_text(value, NAME_CHARS) else None


def is_text(value: object, limit: int) -> TypeGuard[str]:
    """A string the analytics store can keep in a text column `limit` characters wide:
    PostgreSQL's cannot hold NUL nor more characters than the column's width, so a key like that
    is malformed (it would fail every retry of its batch)."""
    return type(value) is str and len(value) <= limit and "\x00" not in value
