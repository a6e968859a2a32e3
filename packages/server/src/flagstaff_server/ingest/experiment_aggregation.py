"""An experiment's per-treatment sufficient statistics, aggregated in the analytics store (SQLite
or PostgreSQL) from the tables processing keeps incrementally: `experiment_exposures` (each
unit's first exposure per flag version) and `ingest_custom_events` (every custom event with its
metric value). One statement per metric; SQL only, the arithmetic is `flagstaff_stats`'.

Per unit: its treatment is the variation of its earliest exposure at the iteration's flag
versions; its events are the custom events with the metric's key, of its context key, created at
or after that exposure (and not after the iteration's end). Its value is 1/0 for a conversion
metric (any event / none), the sum of its values for a `sum` metric, their mean for an
`average` metric; an exposed unit without events is 0 (so `n` is every exposed unit). Per
variation: n, Σx, Σx², and Σ of the raw event values.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text

MAX_MS = 253_402_300_799_999


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricQuery:
    project: str
    environment: str
    flag_key: str
    first_version: int
    last_version: int
    """The flag versions of the iteration (inclusive)."""
    context_kind: str
    event_key: str
    numeric: bool
    aggregation: str
    """`sum` or `average` (ignored for a conversion metric)."""
    end_ms: int = MAX_MS


@dataclass(frozen=True, slots=True)
class VariationTotals:
    variation: int
    units: int
    total: float
    total_squares: float
    event_values_sum: float


def unit_value_sql(query: MetricQuery) -> str:
    if not query.numeric:
        return "CASE WHEN e.events > 0 THEN 1.0 ELSE 0.0 END"
    if query.aggregation == "average":
        return "CASE WHEN e.valued > 0 THEN e.total / e.valued ELSE 0.0 END"
    return "COALESCE(e.total, 0.0)"


STATEMENT = """
WITH ranked AS (
    SELECT context_key, variation, first_ms,
           ROW_NUMBER() OVER (PARTITION BY context_key ORDER BY first_ms, variation) AS rank
    FROM experiment_exposures
    WHERE project = :project AND environment = :environment AND flag_key = :flag
      AND flag_version BETWEEN :first_version AND :last_version
      AND context_kind = :kind
),
units AS (
    SELECT context_key, variation, first_ms FROM ranked WHERE rank = 1
),
per_unit AS (
    SELECT u.context_key AS context_key,
           COUNT(c.id) AS events,
           COUNT(c.metric_value) AS valued,
           SUM(c.metric_value) AS total
    FROM units u
    JOIN ingest_custom_events c
      ON c.context_key = u.context_key AND c.created_ms >= u.first_ms
    WHERE c.project = :project AND c.environment = :environment AND c.key = :event
      AND c.created_ms <= :end_ms
    GROUP BY u.context_key
),
valued AS (
    SELECT u.variation AS variation, {value} AS x, COALESCE(e.total, 0.0) AS raw
    FROM units u LEFT JOIN per_unit e ON e.context_key = u.context_key
)
SELECT variation, COUNT(*), COALESCE(SUM(x), 0.0), COALESCE(SUM(x * x), 0.0),
       COALESCE(SUM(raw), 0.0)
FROM valued GROUP BY variation ORDER BY variation
"""


def aggregate_metric(connection: Connection, query: MetricQuery) -> list[VariationTotals]:
    """Per variation, the sufficient statistics of the metric's per-unit values."""
    rows = connection.execute(
        text(STATEMENT.format(value=unit_value_sql(query))),
        {
            "project": query.project,
            "environment": query.environment,
            "flag": query.flag_key,
            "first_version": query.first_version,
            "last_version": query.last_version,
            "kind": query.context_kind,
            "event": query.event_key,
            "end_ms": query.end_ms,
        },
    )
    return [
        VariationTotals(int(v), int(n), float(s), float(ss), float(raw))
        for v, n, s, ss, raw in rows
    ]
