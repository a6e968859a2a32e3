"""Prometheus text exposition of a delivery node: streams, sends, sheds, feed position and lag,
snapshot age and per-environment versions. Takes what it renders as arguments (the node hands
them in: `DeliveryNode.metrics_text`); changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable

from flagstaff_server.delivery.prometheus import Exposition, label_value
from flagstaff_server.delivery.store import Environment

CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
PREFIX = "flagstaff_delivery_"


def render(
    *,
    admission_counts: Counter[str],
    node_counts: Counter[str],
    environments: Collection[Environment],
    position: int,
    epoch: int = 1,
    head: int,
    propagation_seconds: float,
    feed_connected: bool,
    current: bool,
    now: float,
    more: Iterable[list[str]] = (),
) -> bytes:
    """`admission_counts` and `node_counts` are the admission's and the node's counters;
    `position`/`head` the last feed seq applied and the newest seen, `epoch` the database
    epoch of `position`; `propagation_seconds` the
    commit-to-apply delay of the last change; `now` the node's clock; `more` lines to append."""
    exposition = Exposition(PREFIX)
    metric = exposition.metric

    counts = admission_counts
    streams: dict[str, int] = {"v1": 0, "v2": 0}
    for env in environments:
        for channel in env.broadcaster.channels:
            streams[channel.protocol] += 1
    metric(
        "open_streams",
        "gauge",
        "Open SSE streams by protocol.",
        [(f'{{protocol="{p}"}}', n) for p, n in streams.items()],
    )
    metric(
        "streams_opened_total",
        "counter",
        "Streams accepted.",
        [(f'{{protocol="{p}"}}', counts[f"stream_{p}"]) for p in ("v1", "v2")],
    )
    metric(
        "sends_total",
        "counter",
        "Responses and stream openings by payload: full data set, delta, none, not-modified.",
        [
            ('{payload="full"}', counts["full_send"]),
            ('{payload="delta"}', counts["delta_send"]),
            ('{payload="none"}', counts["none_send"]),
            ('{payload="not_modified"}', counts["not_modified"]),
        ],
    )
    metric(
        "sheds_total",
        "counter",
        "Requests refused with 503 + Retry-After by admission control.",
        [
            ('{reason="stream_cap"}', counts["stream_shed"]),
            ('{reason="full_send_rate"}', counts["full_send_shed"]),
            ('{reason="not_ready"}', node_counts["not_ready"]),
        ],
    )
    metric(
        "stream_closes_total",
        "counter",
        "Streams closed by the server: too slow to read, or past their maximum age.",
        [('{reason="slow"}', counts["evicted"]), ('{reason="max_age"}', counts["aged_out"])],
    )
    metric(
        "unauthorized_total",
        "counter",
        "Requests with unknown SDK keys.",
        [("", node_counts["unauthorized"])],
    )
    metric("feed_position", "gauge", "Last change-feed seq applied.", [("", position)])
    metric("feed_epoch", "gauge", "Database epoch of the feed position.", [("", epoch)])
    metric("feed_head", "gauge", "Newest change-feed seq seen.", [("", head)])
    metric(
        "feed_lag_changes",
        "gauge",
        "Changes known to exist but not yet applied.",
        [("", max(0, head - position))],
    )
    metric(
        "feed_lag_seconds",
        "gauge",
        "Commit-to-apply delay of the last change applied.",
        [("", propagation_seconds)],
    )
    metric(
        "feed_connected",
        "gauge",
        "1 while subscribed to the feed.",
        [("", 1 if feed_connected else 0)],
    )
    metric(
        "current",
        "gauge",
        "1 once caught up with the feed since start.",
        [("", 1 if current else 0)],
    )
    metric(
        "feed_errors_total",
        "counter",
        "Feed failures (each followed by a backoff).",
        [("", node_counts["feed_error"])],
    )
    metric(
        "changes_total",
        "counter",
        "Feed changes by outcome.",
        [
            (f'{{outcome="{o}"}}', node_counts[f"change_{o}"])
            for o in (
                "applied",
                "stale",
                "invalid",
                "environment",
                "removed",
                "replayed",
                "epoch",
                "foreign",
            )
        ],
    )
    metric(
        "resyncs_total",
        "counter",
        "Full resynchronisations from the store (the node was ahead of a new epoch).",
        [("", node_counts["resync"])],
    )
    env_labels = [
        (f'{{project="{label_value(e.project)}",environment="{label_value(e.key)}"}}', e)
        for e in environments
    ]
    metric(
        "environment_seq",
        "gauge",
        "Feed seq of each environment's snapshot (its version).",
        [(labels, e.snapshot.seq) for labels, e in env_labels],
    )
    metric(
        "snapshot_age_seconds",
        "gauge",
        "Seconds since each environment's snapshot last changed or was loaded.",
        [(labels, max(0.0, now - e.updated)) for labels, e in env_labels],
    )
    for lines in more:
        exposition.lines.extend(lines)
    return exposition.encode()
