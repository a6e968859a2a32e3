"""Metrics through the management API in LaunchDarkly's shapes: conversion and numeric custom
metrics with success criteria and randomization units, latency and error-rate metrics as such,
JSON Patch edits, deletion refused while an experiment measures it; every write audit-logged;
bad input a 400 naming the field with nothing stored."""

from __future__ import annotations

from typing import Any

import pytest
from experiment_api import METRICS, Lab, problem


async def test_metrics_are_created_read_listed_edited_and_deleted(lab: Lab) -> None:
    conversion = await lab.metric(key="signup", kind="custom", eventKey="signed-up")
    assert conversion["isNumeric"] is False
    assert conversion["successCriteria"] == "HigherThanBaseline"
    assert conversion["unitAggregationType"] == "sum"
    assert conversion["randomizationUnits"] == ["user"]
    assert conversion["eventDefault"] == {"disabled": False, "value": 0}
    assert conversion["_version"] == 1
    assert len(conversion["_id"]) == 24
    revenue = await lab.metric(
        key="revenue",
        kind="custom",
        eventKey="purchase",
        isNumeric=True,
        unit="USD",
        successCriteria="HigherThanBaseline",
        unitAggregationType="sum",
        randomizationUnits=["user", "organization"],
    )
    assert revenue["unit"] == "USD"
    latency = await lab.metric(
        key="latency",
        kind="custom",
        eventKey="request-ms",
        isNumeric=True,
        successCriteria="LowerThanBaseline",
        unitAggregationType="average",
    )
    errors = await lab.metric(
        key="errors", kind="custom", eventKey="error", successCriteria="LowerThanBaseline"
    )
    assert (latency["unitAggregationType"], errors["successCriteria"]) == (
        "average",
        "LowerThanBaseline",
    )
    read = (await lab.client.get(f"{METRICS}/revenue")).json()
    assert read == revenue
    listed = (await lab.client.get(METRICS)).json()
    assert [m["key"] for m in listed["items"]] == ["signup", "revenue", "latency", "errors"]
    assert listed["totalCount"] == 4

    patched = await lab.client.patch(
        f"{METRICS}/revenue",
        json={
            "comment": "in euros now",
            "patch": [
                {"op": "replace", "path": "/unit", "value": "EUR"},
                {"op": "replace", "path": "/name", "value": "Revenue"},
            ],
        },
    )
    assert patched.status_code == 200, patched.text
    assert (patched.json()["unit"], patched.json()["name"], patched.json()["_version"]) == (
        "EUR",
        "Revenue",
        2,
    )
    stale = await lab.client.patch(
        f"{METRICS}/revenue", json=[{"op": "test", "path": "/_version", "value": 1}]
    )
    assert stale.status_code == 409, stale.text
    deleted = await lab.client.delete(f"{METRICS}/signup")
    assert deleted.status_code == 204
    assert (await lab.client.get(f"{METRICS}/signup")).status_code == 404
    actions = await lab.audit()
    assert actions.count("createMetric") == 4
    assert actions.count("updateMetric") == 1
    assert actions.count("deleteMetric") == 1


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"kind": "custom", "eventKey": "e"}, "/key"),
        ({"key": "bad key", "kind": "custom", "eventKey": "e"}, "/key"),
        ({"key": "m", "kind": "email", "eventKey": "e"}, "/kind"),
        ({"key": "m", "kind": "custom"}, "/eventKey"),
        ({"key": "m", "kind": "custom", "eventKey": "e", "isNumeric": True}, "/successCriteria"),
        (
            {"key": "m", "kind": "custom", "eventKey": "e", "successCriteria": "Up"},
            "/successCriteria",
        ),
        (
            {"key": "m", "kind": "custom", "eventKey": "e", "unitAggregationType": "average"},
            "/unitAggregationType",
        ),
        ({"key": "m", "kind": "custom", "eventKey": "e", "unit": "ms"}, "/unit"),
        (
            {"key": "m", "kind": "custom", "eventKey": "e", "randomizationUnits": ["multi"]},
            "/randomizationUnits/0",
        ),
        (
            {"key": "m", "kind": "custom", "eventKey": "e", "randomizationUnits": []},
            "/randomizationUnits",
        ),
        (
            {"key": "m", "kind": "custom", "eventKey": "e", "analysisType": "percentile"},
            "/analysisType",
        ),
        (
            {"key": "m", "kind": "custom", "eventKey": "e", "eventDefault": {"value": 3}},
            "/eventDefault/value",
        ),
        ({"key": "m", "kind": "custom", "eventKey": "e", "colour": "red"}, "/colour"),
        ({"key": "m", "kind": "click", "urls": [{"kind": "exact", "url": "/x"}]}, "/selector"),
        ({"key": "m", "kind": "pageview", "urls": [{"kind": "fuzzy"}]}, "/urls/0/kind"),
    ],
)
async def test_a_bad_metric_is_a_400_naming_the_field_and_stores_nothing(
    lab: Lab, body: dict[str, Any], path: str
) -> None:
    refused = problem(await lab.client.post(METRICS, json=body), 400)
    assert refused["path"] == path, refused
    assert (await lab.client.get(METRICS)).json()["totalCount"] == 0
    assert "createMetric" not in await lab.audit()


async def test_a_taken_key_or_a_patch_breaking_a_metric_is_refused(lab: Lab) -> None:
    await lab.metric(key="signup", kind="custom", eventKey="signed-up")
    taken = problem(
        await lab.client.post(METRICS, json={"key": "signup", "kind": "custom", "eventKey": "x"}),
        409,
    )
    assert "already exists" in taken["detail"] or "already exists" in str(taken)
    broken = problem(
        await lab.client.patch(f"{METRICS}/signup", json=[{"op": "remove", "path": "/eventKey"}]),
        400,
    )
    assert broken["path"] == "/eventKey"
    rekeyed = problem(
        await lab.client.patch(
            f"{METRICS}/signup", json=[{"op": "replace", "path": "/key", "value": "other"}]
        ),
        400,
    )
    assert rekeyed["path"] == "/key"
    assert (await lab.client.get(f"{METRICS}/signup")).json()["_version"] == 1
    assert problem(await lab.client.get("/api/v2/metrics/nope"), 404)
