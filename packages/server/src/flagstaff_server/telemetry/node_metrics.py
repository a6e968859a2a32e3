"""Delivery and ingestion figures as OpenTelemetry instruments. Every instrument is observable:
its callback reads the counters the node already keeps for `/metrics` when the metric reader
collects (in the reader's thread), so serving and ingesting pay nothing for it and the two
expositions cannot disagree. Reads only; changes nothing in the nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from opentelemetry.metrics import CallbackOptions, Meter, Observation

if TYPE_CHECKING:
    from flagstaff_server.delivery.node import DeliveryNode
    from flagstaff_server.ingest.node import IngestNode

Callback = Callable[[CallbackOptions], Iterable[Observation]]

SEND_PAYLOADS = {
    "full": "full_send",
    "delta": "delta_send",
    "none": "none_send",
    "not_modified": "not_modified",
}
CHANGE_OUTCOMES = (
    "applied",
    "stale",
    "invalid",
    "environment",
    "removed",
    "replayed",
    "epoch",
    "foreign",
)
INGEST_STATUS = {
    "accepted": "accepted",
    "duplicate": "duplicates",
    "over_budget": "overBudget",
    "processed": "processed",
    "quarantined": "quarantined",
}


def observe_delivery(meter: Meter, node: DeliveryNode) -> None:
    """`flagstaff.delivery.*`: streams open and opened, sends by payload, sheds by reason, feed
    changes by outcome, the feed's lag and the last change's propagation delay."""

    def open_streams(options: CallbackOptions) -> Iterable[Observation]:
        counts = {"v1": 0, "v2": 0}
        try:
            for environment in tuple(node.store.environments.values()):
                for channel in tuple(environment.broadcaster.channels):
                    counts[channel.protocol] += 1
        except RuntimeError:  # changed while read from this thread: report at the next collection
            return []
        return [Observation(n, {"flagstaff.delivery.protocol": p}) for p, n in counts.items()]

    def opened(options: CallbackOptions) -> Iterable[Observation]:
        counts = node.admission.counts
        return [
            Observation(counts[f"stream_{p}"], {"flagstaff.delivery.protocol": p})
            for p in ("v1", "v2")
        ]

    def sends(options: CallbackOptions) -> Iterable[Observation]:
        counts = node.admission.counts
        return [
            Observation(counts[key], {"flagstaff.delivery.payload": payload})
            for payload, key in SEND_PAYLOADS.items()
        ]

    def sheds(options: CallbackOptions) -> Iterable[Observation]:
        admission = node.admission.counts
        return [
            Observation(admission["stream_shed"], {"flagstaff.delivery.reason": "stream_cap"}),
            Observation(
                admission["full_send_shed"], {"flagstaff.delivery.reason": "full_send_rate"}
            ),
            Observation(node.counts["not_ready"], {"flagstaff.delivery.reason": "not_ready"}),
        ]

    def changes(options: CallbackOptions) -> Iterable[Observation]:
        return [
            Observation(node.counts[f"change_{o}"], {"flagstaff.delivery.outcome": o})
            for o in CHANGE_OUTCOMES
        ]

    def lag(options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(max(0, node.head - node.position))]

    def propagation(options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(node.last_propagation_seconds)]

    meter.create_observable_up_down_counter(
        "flagstaff.delivery.streams", [open_streams], "{stream}", "Open SSE streams."
    )
    meter.create_observable_counter(
        "flagstaff.delivery.streams.opened", [opened], "{stream}", "Streams accepted."
    )
    meter.create_observable_counter(
        "flagstaff.delivery.sends",
        [sends],
        "{response}",
        "Responses and stream openings by payload: full data set, delta, none, not modified.",
    )
    meter.create_observable_counter(
        "flagstaff.delivery.sheds", [sheds], "{request}", "Requests refused with 503."
    )
    meter.create_observable_counter(
        "flagstaff.delivery.changes", [changes], "{change}", "Change-feed changes by outcome."
    )
    meter.create_observable_gauge(
        "flagstaff.delivery.feed.lag",
        [lag],
        "{change}",
        "Changes known to exist but not yet applied.",
    )
    meter.create_observable_gauge(
        "flagstaff.delivery.propagation.duration",
        [propagation],
        "s",
        "Commit-to-apply delay of the last change applied.",
    )


def observe_ingest(meter: Meter, node: IngestNode) -> None:
    """`flagstaff.ingest.*`: payloads by outcome, the journal's backlog and sizes."""

    def read(key: str) -> int | float | None:
        value = node.status().get(key)  # a dict of figures the node holds: cheap to build
        return value if isinstance(value, int | float) else None

    def payloads(options: CallbackOptions) -> Iterable[Observation]:
        status = node.status()
        return [
            Observation(status[key], {"flagstaff.ingest.outcome": outcome})
            for outcome, key in INGEST_STATUS.items()
            # no processor on this node: no processed/quarantined figure at all, rather than 0
            if isinstance(status.get(key), int)
        ]

    def gauge(key: str) -> Callback:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            value = read(key)
            return [] if value is None else [Observation(value)]

        return observe

    meter.create_observable_counter(
        "flagstaff.ingest.payloads",
        [payloads],
        "{payload}",
        "Event payloads by outcome: accepted (fsync'd), duplicate, over_budget (503), "
        "processed, quarantined.",
    )
    meter.create_observable_gauge(
        "flagstaff.ingest.backlog",
        [gauge("backlog")],
        "{record}",
        "Durable records not yet processed (or forwarded).",
    )
    meter.create_observable_gauge(
        "flagstaff.ingest.journal.size", [gauge("journalBytes")], "By", "The journal's bytes."
    )
    meter.create_observable_gauge(
        "flagstaff.ingest.journal.unprocessed",
        [gauge("unprocessedBytes")],
        "By",
        "Journal bytes not yet processed (or forwarded): what the disk budget counts.",
    )
