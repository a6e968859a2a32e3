"""The analytics store as the experiments' and rollouts' `Aggregator`: a metric's per-variation
totals over a range of flag versions (`experiment_aggregation`), in the services' terms; and as
the `ExposureCounter` of an iteration's units over time."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.experiment_aggregation import (
    MetricQuery,
    aggregate_metric,
    count_exposures,
)
from flagstaff_server.services.experiment_results import (
    Aggregator,
    ExposureCount,
    IterationScope,
    MetricScope,
    Totals,
)


def metric_totals(analytics: AnalyticsStore, scope: MetricScope) -> Sequence[Totals]:
    query = MetricQuery(
        project=scope.project,
        environment=scope.environment,
        flag_key=scope.flag_key,
        first_version=scope.first_version,
        last_version=scope.last_version,
        context_kind=scope.context_kind,
        event_key=scope.metric.event_key,
        numeric=scope.metric.numeric,
        aggregation=scope.metric.aggregation,
        **({} if scope.end_ms is None else {"end_ms": scope.end_ms}),
    )
    rows = analytics.run(lambda connection: aggregate_metric(connection, query))
    return [
        Totals(r.variation, r.units, r.total, r.total_squares, r.event_values_sum) for r in rows
    ]


def aggregator(analytics: Callable[[], AnalyticsStore]) -> Aggregator:
    """An `Aggregator` over the store `analytics` returns when asked (it may open late)."""
    return lambda scope: metric_totals(analytics(), scope)


def exposure_counts(
    analytics: AnalyticsStore, scope: IterationScope, bucket_ms: int
) -> Sequence[ExposureCount]:
    return analytics.run(lambda connection: count_exposures(connection, scope, bucket_ms))
