"""Prometheus lines for client-side delivery (browser, mobile, OFREP): open streams, opens, sheds,
evaluations by outcome and the re-evaluator's work. Appended to the node's `/metrics`; takes what
it renders as arguments (client-side delivery hands them in), changes nothing.
"""

from __future__ import annotations

from collections import Counter

from flagstaff_server.delivery.client_stream import Reevaluator
from flagstaff_server.delivery.evaluation_cache import EvaluationCache
from flagstaff_server.delivery.prometheus import Exposition

PREFIX = "flagstaff_delivery_client_"
KINDS = ("eval", "ping", "ofrep")


def render(
    *, admission_counts: Counter[str], reevaluator: Reevaluator, cache: EvaluationCache
) -> list[str]:
    """`admission_counts`: the node's admission counters (client-side entries among them)."""
    exposition = Exposition(PREFIX)
    metric = exposition.metric

    counts = admission_counts
    open_by_kind: Counter[str] = Counter(
        stream.kind for streams in reevaluator.streams.values() for stream in streams
    )
    metric(
        "open_streams",
        "gauge",
        "Open client-side streams by kind (eval: /eval and /meval; ping; ofrep: OFREP SSE).",
        [(f'{{kind="{k}"}}', open_by_kind[k]) for k in KINDS],
    )
    metric(
        "streams_opened_total",
        "counter",
        "Client-side streams accepted, by kind.",
        [(f'{{kind="{k}"}}', counts[f"client_stream_{k}"]) for k in KINDS],
    )
    metric(
        "sheds_total",
        "counter",
        "Client-side requests refused by admission control (503, or 429 for OFREP, with "
        "Retry-After): the client-side stream cap, or the fresh-evaluation rate.",
        [
            ('{reason="client_stream_cap"}', counts["client_stream_shed"]),
            ('{reason="evaluation_rate"}', counts["client_evaluation_shed"]),
        ],
    )
    metric(
        "answers_total",
        "counter",
        "Client-side evaluations asked for, by how they were answered: evaluated afresh "
        "(admitted by the evaluation budget), from the cache of evaluated bodies, or 304.",
        [
            ('{outcome="evaluated"}', counts["client_evaluation"]),
            ('{outcome="cached"}', cache.counts["hit"]),
            ('{outcome="not_modified"}', counts["client_not_modified"]),
        ],
    )
    metric(
        "snapshot_compiles_total",
        "counter",
        "Environment snapshots compiled for evaluation.",
        [("", cache.counts["compile"])],
    )
    metric(
        "reevaluation_cpu_seconds_total",
        "counter",
        "CPU time spent bringing open streams up to a changed snapshot.",
        [("", reevaluator.cpu_seconds)],
    )
    metric(
        "reevaluation_last_pass_seconds",
        "gauge",
        "From a change being noticed to its last stream being handed its events.",
        [("", reevaluator.last_pass_seconds)],
    )
    re_counts = reevaluator.counts
    metric(
        "reevaluation_total",
        "counter",
        "Re-evaluation work: passes, streams updated, context groups evaluated, streams evicted "
        "as too slow, streams closed at their maximum age, worker errors.",
        [
            (f'{{what="{what}"}}', re_counts[what])
            for what in (
                "pass",
                "stream_updated",
                "evaluated_group",
                "evicted",
                "aged_out",
                "error",
            )
        ],
    )
    return exposition.lines
