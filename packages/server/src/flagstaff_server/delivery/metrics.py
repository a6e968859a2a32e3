"""Prometheus text exposition of a delivery node: streams, sends, sheds, feed position and lag,
snapshot age and per-environment versions. Reads node state; changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flagstaff_server.delivery.prometheus import Exposition, label_value

if TYPE_CHECKING:
    from flagstaff_server.delivery.node import DeliveryNode

CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
PREFIX = "flagstaff_delivery_"


def render(node: DeliveryNode) -> bytes:
    exposition = Exposition(PREFIX)
    metric = exposition.metric

    admission = node.admission
    counts = admission.counts
    now = node.clock()
    streams: dict[str, int] = {"v1": 0, "v2": 0}
    for env in node.store.environments.values():
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
            ('{reason="not_ready"}', node.counts["not_ready"]),
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
        [("", node.counts["unauthorized"])],
    )
    metric("feed_position", "gauge", "Last change-feed seq applied.", [("", node.position)])
    metric("feed_head", "gauge", "Newest change-feed seq seen.", [("", node.head)])
    metric(
        "feed_lag_changes",
        "gauge",
        "Changes known to exist but not yet applied.",
        [("", max(0, node.head - node.position))],
    )
    metric(
        "feed_lag_seconds",
        "gauge",
        "Commit-to-apply delay of the last change applied.",
        [("", node.last_propagation_seconds)],
    )
    metric(
        "feed_connected",
        "gauge",
        "1 while subscribed to the feed.",
        [("", 1 if node.feed_connected else 0)],
    )
    metric(
        "current",
        "gauge",
        "1 once caught up with the feed since start.",
        [("", 1 if node.current else 0)],
    )
    metric(
        "feed_errors_total",
        "counter",
        "Feed failures (each followed by a backoff).",
        [("", node.counts["feed_error"])],
    )
    metric(
        "changes_total",
        "counter",
        "Feed changes by outcome.",
        [
            (f'{{outcome="{o}"}}', node.counts[f"change_{o}"])
            for o in ("applied", "stale", "invalid", "environment", "removed", "replayed")
        ],
    )
    env_labels = [
        (f'{{project="{label_value(e.project)}",environment="{label_value(e.key)}"}}', e)
        for e in node.store.environments.values()
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
    for source in node.metric_sources:
        exposition.lines.extend(source())
    return exposition.encode()
