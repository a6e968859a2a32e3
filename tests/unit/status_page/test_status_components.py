"""What a node's `/status` body says about each component, in the status page's words: the API
and its database (primary, standby with lag, down), the change feed, delivery's data age,
ingestion's backlog, a relay; a node that stopped answering keeps its components, unreachable;
malformed bodies from a peer never raise."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.status_page.components import Component, Reading, components_of
from status_bodies import api_body, delivery_body, ingest_body, relay_body

URL = "http://10.0.0.5:8030/status"


def reading(body: dict[str, Any] | None, *, error: str | None = None) -> Reading:
    return Reading(source=URL, body=body, last_seen_ms=1000, checked_ms=2000, error=error)


def states(found: list[Component]) -> dict[str, tuple[str, str]]:
    return {c.kind: (c.state, c.detail) for c in found}


def test_an_api_node_on_a_primary_reports_the_api_its_database_and_feed() -> None:
    found = components_of(reading(api_body()))
    assert states(found) == {
        "api": ("operational", "edits and sign-ins work"),
        "database": ("operational", "primary"),
        "changeFeed": ("operational", "in-process"),
    }
    assert {(c.region, c.node, c.last_seen_ms) for c in found} == {("a", "10.0.0.5:8030", 1000)}


def test_an_api_on_a_standby_is_read_only_and_says_the_lag() -> None:
    body = api_body(region="b", role="standby", lag=0.25, primary="a")
    found = states(components_of(reading(body)))
    assert found["api"] == ("standby", "read-only: edits go to region a until a promotion")
    assert found["database"] == ("standby", "hot standby, replication lag under 1 s")


def test_an_api_whose_database_is_down_is_down() -> None:
    found = states(components_of(reading(api_body(store="down"))))
    assert found["api"] == ("down", "its database is unreachable: no edits or sign-ins")
    assert found["database"] == ("down", "unreachable")


@pytest.mark.parametrize(
    ("age", "state", "detail"),
    [
        (0.4, "operational", "serving current data (under 1 s old)"),
        (12.0, "operational", "serving current data (12 s old)"),
        (600.0, "degraded", "serving data 10 min old: changes made since may be missing"),
        (None, "degraded", "serving what it holds; how old its data is is not known yet"),
    ],
)
def test_delivery_is_judged_by_the_age_of_its_data(
    age: float | None, state: str, detail: str
) -> None:
    found = components_of(reading(delivery_body(age=age)))
    assert [(c.kind, c.state, c.detail) for c in found] == [("delivery", state, detail)]
    assert found[0].figures["dataAgeSeconds"] == age


def test_ingestion_with_its_analytics_store_down_keeps_events_and_says_the_backlog() -> None:
    found = states(components_of(reading(ingest_body(analytics="down", backlog=42))))
    kept = "events are accepted and kept on disk, not processed yet; 42 batches wait"
    assert found == {"ingest": ("degraded", kept)}


def test_a_relay_reports_its_environments_and_its_event_forwarding() -> None:
    healthy = states(components_of(reading(relay_body())))
    assert healthy == {
        "relay": ("operational", "all 2 environments current"),
        "relayEvents": ("operational", "forwarding events upstream"),
    }
    cut_off = states(components_of(reading(relay_body(connected=False, age=300, spooled=9))))
    assert cut_off == {
        "relay": (
            "degraded",
            "1 of 2 environments reach upstream; serving (data up to 5 min old)",
        ),
        "relayEvents": ("degraded", "upstream unreachable: 9 payloads kept on disk"),
    }


def test_a_node_that_stopped_answering_keeps_its_components_marked_unreachable() -> None:
    found = components_of(reading(api_body(), error="no answer in time"))
    assert [(c.kind, c.state) for c in found] == [
        ("api", "unreachable"),
        ("database", "unreachable"),
        ("changeFeed", "unreachable"),
    ]
    assert found[0].detail == "not answering (it was operational when last seen)"
    assert all(c.last_seen_ms == 1000 and c.region == "a" for c in found)


def test_a_node_never_heard_from_is_one_unreachable_node_of_unknown_region() -> None:
    found = components_of(Reading(source=URL, checked_ms=2000, error="connection refused"))
    assert [(c.kind, c.state, c.region, c.last_seen_ms) for c in found] == [
        ("node", "unreachable", "unknown", None)
    ]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"role": "relay"},
        {"role": "relay", "environments": []},
        {"parts": "x", "region": 7},
        {"parts": {"delivery": "x", "api": {}, "store": None}, "region": {"name": "UPPER"}},
        {"parts": {"delivery": {"dataAgeSeconds": "old"}}, "ready": True},
        {"role": "relay", "ready": True, "environments": {"e": 3}, "events": {"spooled": None}},
    ],
)
def test_malformed_bodies_from_a_peer_give_components_never_an_error(body: Any) -> None:
    for component in components_of(reading(body)):
        assert component.state in ("operational", "standby", "degraded", "down", "unreachable")
        component.to_json()
