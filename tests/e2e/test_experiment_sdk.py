"""An experiment end to end through the official LaunchDarkly Python SDK (ldclient 9.18.4)
against the whole server (API, delivery, ingestion, one process, SQLite): simulated users with a
known true lift in their `track` metric values; the results in the API find the lift with the
right sign, and they equal the analysis of the raw events exported from the same run (first
exposure per user, events after it, users without events at 0), recomputed here in Python."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from flagstaff_server.settings import Settings
from flagstaff_stats import (
    ArmData,
    Correction,
    MetricKind,
    Summary,
    analyze_metric,
    correct,
    results_representation,
)
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.management import ok

ADMIN = "e2e-experiment-admin-token"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
USERS = 300
BASE, LIFT, SPREAD = 10.0, 3.0, 2.0
"""Each user's purchase value: normal(BASE, SPREAD), plus LIFT when served the new variation."""
RESULTS = (
    "/api/v2/projects/shop/environments/production/experiments/checkout/metrics/revenue/results"
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, httpx.Client]]:
    settings = Settings(data_dir=tmp_path, admin_token=ADMIN, seed_demo=False)
    with (
        serve_flagstaff(settings) as served,
        httpx.Client(base_url=served.url, headers={"Authorization": ADMIN}, timeout=10) as api,
    ):
        yield served.url, api


def start_experiment(api: httpx.Client) -> str:
    project = ok(
        api.post(
            "/api/v2/projects",
            json={
                "key": "shop",
                "name": "Shop",
                "environments": [{"key": "production", "name": "Production", "color": "417505"}],
            },
        )
    )
    flag = ok(api.post("/api/v2/flags/shop", json={"key": "new-checkout", "name": "New checkout"}))
    on = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
    ok(
        api.patch(
            "/api/v2/flags/shop/new-checkout",
            content=orjson.dumps(on),
            headers={"Content-Type": SEMANTIC},
        )
    )
    ok(
        api.post(
            "/api/v2/metrics/shop",
            json={
                "key": "revenue",
                "kind": "custom",
                "eventKey": "purchase",
                "isNumeric": True,
                "successCriteria": "HigherThanBaseline",
                "unitAggregationType": "sum",
            },
        )
    )
    new, old = (v["_id"] for v in flag["variations"])
    treatments = [
        {
            "name": "Old",
            "baseline": True,
            "allocationPercent": "50",
            "parameters": [{"flagKey": "new-checkout", "variationId": old}],
        },
        {
            "name": "New",
            "baseline": False,
            "allocationPercent": "50",
            "parameters": [{"flagKey": "new-checkout", "variationId": new}],
        },
    ]
    ok(
        api.post(
            "/api/v2/projects/shop/environments/production/experiments",
            json={
                "key": "checkout",
                "name": "Checkout",
                "iteration": {
                    "hypothesis": "the new checkout sells more",
                    "metrics": [{"key": "revenue"}],
                    "treatments": treatments,
                    "flags": {"new-checkout": {"ruleId": "fallthrough", "flagConfigVersion": 2}},
                },
            },
        )
    )
    start = {"instructions": [{"kind": "startIteration"}]}
    ok(
        api.patch(
            "/api/v2/projects/shop/environments/production/experiments/checkout",
            content=orjson.dumps(start),
            headers={"Content-Type": SEMANTIC},
        )
    )
    sdk_key: str = project["environments"][0]["apiKey"]
    return sdk_key


def delivered(api: httpx.Client, sdk_key: str) -> bool:
    response = api.get("/sdk/latest-all", headers={"Authorization": sdk_key})
    flag = response.json()["flags"].get("new-checkout", {}) if response.status_code == 200 else {}
    return flag.get("fallthrough", {}).get("rollout", {}).get("kind") == "experiment"


def user_of(event: dict[str, Any]) -> str:
    """The user key of an event: its context, or its context keys (as the SDK sends them)."""
    context = event.get("context")
    key = context["key"] if context is not None else event["contextKeys"]["user"]
    assert isinstance(key, str)
    return key


def analyse_export(events: list[dict[str, Any]], treatments: list[dict[str, Any]]) -> Any:
    """The analysis of the raw events: each user's first in-experiment exposure decides its
    variation; its purchase values at or after it are summed; 0 without any."""
    exposed: dict[str, tuple[int, int]] = {}
    for event in events:
        if event["kind"] == "feature" and event.get("reason", {}).get("inExperiment"):
            user = user_of(event)
            at = (event["creationDate"], event["variation"])
            exposed[user] = min(exposed.get(user, at), at)
    values = dict.fromkeys(exposed, 0.0)
    for event in events:
        if event["kind"] == "custom" and event["key"] == "purchase":
            user = user_of(event)
            if user in exposed and event["creationDate"] >= exposed[user][0]:
                values[user] += event["metricValue"]
    arms = []
    for index, treatment in enumerate(treatments):
        xs = [values[u] for u, (_, variation) in exposed.items() if variation == 1 - index]
        arms.append(
            ArmData(
                treatment_id=treatment["_id"],
                name=treatment["name"],
                allocation=50,
                summary=Summary(n=len(xs), sum=sum(xs), sum_squares=sum(x * x for x in xs)),
            )
        )
    analysis = analyze_metric(arms, baseline_id=treatments[0]["_id"], kind=MetricKind.NUMERIC)
    [corrected] = correct([analysis], Correction.HOLM)
    return results_representation(corrected)


def same(found: Any, expected: Any) -> bool:
    """Equal, numbers to 1e-9 (SQL and Python add in different orders)."""
    if isinstance(expected, dict):
        return found.keys() == expected.keys() and all(
            same(found[k], v) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return len(found) == len(expected) and all(map(same, found, expected))
    if isinstance(expected, float) and isinstance(found, int | float):
        return math.isclose(found, expected, rel_tol=1e-9, abs_tol=1e-12)
    return bool(found == expected)


def test_a_known_lift_is_found_and_the_results_equal_the_raw_events_analysis(
    server: tuple[str, httpx.Client],
) -> None:
    url, api = server
    sdk_key = start_experiment(api)
    wait_until(lambda: delivered(api, sdk_key), what="delivery to serve the experiment rollout")
    config = Config(
        sdk_key,
        base_uri=url,
        stream_uri=url,
        events_uri=url,
        diagnostic_opt_out=True,
        flush_interval=1,
    )
    client = LDClient(config=config, start_wait=30)
    rng = random.Random(17)
    served: dict[bool, int] = {True: 0, False: 0}
    tracked = 0.0
    try:
        assert client.is_initialized()
        for index in range(USERS):
            user = Context.create(f"user-{index}")
            detail = client.variation_detail("new-checkout", user, False)
            assert detail.reason is not None
            assert detail.reason.get("inExperiment") is True
            served[bool(detail.value)] += 1
            if rng.random() < 0.9:  # some users buy nothing: they count as 0
                value = round(rng.gauss(BASE + (LIFT if detail.value else 0.0), SPREAD), 2)
                client.track("purchase", user, metric_value=value)
                tracked += value
        client.flush()

        def processed() -> bool:
            arms = api.get(RESULTS).json().get("treatmentResults", [])
            units = sum(r["units"] for r in arms)
            values = sum(r["eventValuesSum"] for r in arms)
            return units == USERS and math.isclose(values, tracked, rel_tol=1e-9)

        wait_until(processed, timeout=30, what="every exposure and purchase processed")
    finally:
        client.close()
    assert min(served.values()) > USERS // 4  # both treatments served

    experiment = ok(api.get("/api/v2/projects/shop/environments/production/experiments/checkout"))
    treatments = experiment["currentIteration"]["treatments"]
    body = api.get(RESULTS).json()
    results = {r["treatmentId"]: r for r in body["treatmentResults"]}
    new = results[treatments[1]["_id"]]
    assert new["difference"] > 0  # the right sign
    assert new["confidenceInterval"]["lower"] > 0
    assert new["probabilityToBeatBaseline"] > 0.95
    assert [results[t["_id"]]["units"] for t in treatments] == [served[False], served[True]]

    export = api.get("/api/v2/insights/shop/production/events")
    assert export.status_code == 200
    events = [orjson.loads(line) for line in export.content.splitlines()]
    expected = analyse_export(events, treatments)
    assert same(body["treatmentResults"], expected["treatmentResults"])
    assert same(body["probabilityOfMismatch"], expected["probabilityOfMismatch"])
