"""The results' aggregation on both analytics stores (SQLite, PostgreSQL): a unit's treatment is
its first exposure over the iteration's flag versions, events before it or after the end do not
count, a unit without events is 0, and conversion, sum and average metrics take their values."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.experiment_aggregation import (
    MetricQuery,
    VariationTotals,
    aggregate_metric,
    count_exposures,
)
from flagstaff_server.ingest.record import Kind, Record
from flagstaff_server.services.experiment_results import ExposureCount, IterationScope
from support.services import postgres_database


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.service)])
def analytics(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AnalyticsStore]:
    if request.param == "sqlite":
        store = AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}")
        yield store
        store.close()
    else:
        with postgres_database("flagstaff_aggregation") as url:
            store = AnalyticsStore(url)
            yield store
            store.close()


def exposed(user: str, at: int, variation: int, version: int = 3) -> dict[str, Any]:
    return {
        "kind": "feature",
        "creationDate": at,
        "key": "f",
        "version": version,
        "variation": variation,
        "reason": {"kind": "RULE_MATCH", "inExperiment": True},
        "contextKeys": {"user": user},
    }


def bought(user: str, at: int, value: float | None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "kind": "custom",
        "creationDate": at,
        "key": "buy",
        "contextKeys": {"user": user},
    }
    if value is not None:
        event["metricValue"] = value
    return event


EVENTS = [
    exposed("a", 100, 0),
    exposed("a", 90, 1, version=4),  # earlier, at a later version of the iteration: decides
    exposed("b", 100, 0),
    exposed("c", 100, 1),
    exposed("z", 100, 1, version=2),  # before the iteration's versions
    bought("a", 95, 4.0),
    bought("a", 120, 2.0),
    bought("b", 99, 7.0),  # before b's exposure
    bought("b", 130, 1.0),
    bought("b", 140, None),
    bought("c", 5_000, 8.0),  # after the end
    bought("z", 150, 50.0),
]


def commit(analytics: AnalyticsStore, events: list[dict[str, Any]]) -> None:
    """The events as one SDK payload, processed into the store."""
    record = Record(
        seq=1,
        received_ms=1,
        kind=Kind.ANALYTICS,
        project="p",
        environment="e",
        payload_id="one",
        payload=orjson.dumps(events),
    )
    analytics.commit(None, [record], now_ms=1)


def query(**settings: Any) -> MetricQuery:
    defaults: dict[str, Any] = {
        "project": "p",
        "environment": "e",
        "flag_key": "f",
        "first_version": 3,
        "last_version": 4,
        "context_kind": "user",
        "event_key": "buy",
        "numeric": True,
        "aggregation": "sum",
        "end_ms": 1_000,
    }
    return MetricQuery(**(defaults | settings))


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {},  # a: 4+2 (variation 1); b: 1 (variation 0); c: 0 (variation 1)
            [VariationTotals(0, 1, 1.0, 1.0, 1.0), VariationTotals(1, 2, 6.0, 36.0, 6.0)],
        ),
        (
            {"aggregation": "average"},  # b: two events, one with a value
            [VariationTotals(0, 1, 1.0, 1.0, 1.0), VariationTotals(1, 2, 3.0, 9.0, 6.0)],
        ),
        (
            {"numeric": False},
            [VariationTotals(0, 1, 1.0, 1.0, 1.0), VariationTotals(1, 2, 1.0, 1.0, 6.0)],
        ),
    ],
)
def test_per_unit_values_follow_first_exposures_within_the_iteration(
    analytics: AnalyticsStore, settings: dict[str, Any], expected: list[VariationTotals]
) -> None:
    commit(analytics, EVENTS)
    found = analytics.run(lambda connection: aggregate_metric(connection, query(**settings)))
    assert found == expected


def test_units_are_counted_in_the_bucket_of_their_first_exposure(
    analytics: AnalyticsStore,
) -> None:
    events = [
        *EVENTS,
        exposed("d", 260, 0),
        exposed("d", 30, 0, version=4),  # earlier: d counts at 30
        exposed("e", 199, 1),
        exposed("z", 10, 0, version=5),  # after the iteration's versions
    ]
    commit(analytics, events)
    scope = IterationScope(
        project="p",
        environment="e",
        flag_key="f",
        first_version=3,
        last_version=4,
        context_kind="user",
    )
    found = analytics.run(lambda connection: count_exposures(connection, scope, 100))
    # a (90, variation 1) and d (30, variation 0) in [0, 100); b (0), c (1), e (1) in [100, 200)
    assert found == [
        ExposureCount(0, 0, 1),
        ExposureCount(0, 1, 1),
        ExposureCount(100, 0, 1),
        ExposureCount(100, 1, 2),
    ]
