"""Experiments through the management API in LaunchDarkly's shapes: a draft iteration on the
flag's fallthrough or a rule; starting it sets an `experiment` rollout of the treatments'
allocation (the rest untracked), stopping it restores what was served or serves the winner;
every step audit-logged; bad input a 400 naming the field, nothing stored. Results from events
processed into the analytics store: each unit's first exposure decides its treatment, events
before exposure do not count, exposed units without events count as 0."""

from __future__ import annotations

import math
from typing import Any

import orjson
from experiment_api import (
    EXPERIMENTS,
    FLAG,
    PROJECT,
    SEMANTIC,
    Lab,
    experiment_body,
    exposure,
    problem,
)
from flagstaff_stats import ArmData, MetricKind, Summary, analyze_metric, results_representation
from scipy import stats as scipy_stats
from support.experiment_events import track


def expected_results(
    arms: dict[str, tuple[str, list[float]]], *, baseline: str
) -> dict[str, dict[str, Any]]:
    """The statistics engine's answer for known per-unit values (what the API must match)."""
    data = [
        ArmData(
            treatment_id=treatment,
            name=name,
            allocation=50,
            summary=Summary(n=len(xs), sum=sum(xs), sum_squares=sum(x * x for x in xs)),
        )
        for treatment, (name, xs) in arms.items()
    ]
    body = results_representation(
        analyze_metric(data, baseline_id=baseline, kind=MetricKind.NUMERIC)
    )
    results: Any = body["treatmentResults"]
    return {r["treatmentId"]: r for r in results}


async def test_starting_an_iteration_sets_an_experiment_rollout_and_stopping_restores_it(
    lab: Lab,
) -> None:
    await lab.metric(key="signup", kind="custom", eventKey="signed-up")
    created = await lab.experiment(
        "checkout",
        ["signup"],
        treatments=[
            {
                "name": "Control",
                "baseline": True,
                "allocationPercent": "40",
                "parameters": [
                    {"flagKey": FLAG, "variationId": (await lab.flag())["variations"][1]["_id"]}
                ],
            },
            {
                "name": "New",
                "baseline": False,
                "allocationPercent": "40",
                "parameters": [
                    {"flagKey": FLAG, "variationId": (await lab.flag())["variations"][0]["_id"]}
                ],
            },
        ],
    )
    draft = created["draftIteration"]
    assert draft["status"] == "not_started"
    assert "currentIteration" not in created
    before = (await lab.flag())["environments"]["production"]["fallthrough"]

    started = await lab.instruct("checkout", {"kind": "startIteration"})
    assert started.status_code == 200, started.text
    current = started.json()["currentIteration"]
    assert current["status"] == "running"
    assert current["startedAt"] > 0
    rollout = (await lab.flag())["environments"]["production"]["fallthrough"]["rollout"]
    assert rollout["kind"] == "experiment"
    assert rollout["contextKind"] == "user"
    assert [(v["variation"], v["weight"], v.get("_untracked")) for v in rollout["variations"]] == [
        (1, 40000, None),
        (0, 40000, None),
        (1, 20000, True),  # not in the experiment: the baseline's variation, untracked
    ]
    again = problem(await lab.instruct("checkout", {"kind": "startIteration"}), 409)
    assert "draft" in str(again)

    stopped = await lab.instruct("checkout", {"kind": "stopIteration"})
    assert stopped.status_code == 200, stopped.text
    assert stopped.json()["currentIteration"]["status"] == "stopped"
    assert (await lab.flag())["environments"]["production"]["fallthrough"] == before

    actions = await lab.audit()
    assert actions.count("createExperiment") == 1
    assert actions.count("updateExperiment") == 2
    assert actions.count("updateFlag") == 3  # turned on (fixture), started, stopped


async def test_stopping_with_a_winner_serves_it_on_the_rule(lab: Lab) -> None:
    await lab.metric(key="signup", kind="custom", eventKey="signed-up")
    flag = await lab.flag()
    rule = await lab.client.patch(
        f"/api/v2/flags/{PROJECT}/{FLAG}",
        content=orjson.dumps(
            {
                "environmentKey": "production",
                "instructions": [
                    {
                        "kind": "addRule",
                        "clauses": [{"attribute": "country", "op": "in", "values": ["nz"]}],
                        "variationId": flag["variations"][1]["_id"],
                    }
                ],
            }
        ),
        headers={"Content-Type": SEMANTIC},
    )
    assert rule.status_code == 200, rule.text
    rule_id = rule.json()["environments"]["production"]["rules"][0]["_id"]
    experiment = await lab.experiment(
        "nz", ["signup"], flags={FLAG: {"ruleId": rule_id, "flagConfigVersion": 2}}
    )
    assert (await lab.instruct("nz", {"kind": "startIteration"})).status_code == 200
    rules = (await lab.flag())["environments"]["production"]["rules"]
    assert rules[0]["rollout"]["kind"] == "experiment"
    winner = experiment["draftIteration"]["treatments"][1]["_id"]
    done = await lab.instruct(
        "nz", {"kind": "stopIteration", "winningTreatmentId": winner, "winningReason": "better"}
    )
    assert done.status_code == 200, done.text
    assert done.json()["currentIteration"]["winningTreatmentId"] == winner
    rules = (await lab.flag())["environments"]["production"]["rules"]
    assert rules[0].get("rollout") is None
    assert rules[0]["variation"] == 0
    assert (await lab.flag())["environments"]["production"]["fallthrough"] == {"variation": 0}


async def test_bad_experiments_are_400s_naming_the_field(lab: Lab) -> None:
    await lab.metric(key="signup", kind="custom", eventKey="signed-up")
    flag = await lab.flag()
    cases: list[tuple[dict[str, Any], str]] = []
    body = experiment_body("x", ["missing"], flag)
    cases.append((body, "/iteration/metrics/0/key"))
    body = experiment_body("x", ["signup"], flag)
    body["iteration"]["treatments"][0]["allocationPercent"] = "70"
    cases.append((body, "/iteration/treatments"))
    body = experiment_body("x", ["signup"], flag)
    body["iteration"]["treatments"][1]["baseline"] = True
    cases.append((body, "/iteration/treatments"))
    body = experiment_body("x", ["signup"], flag)
    body["iteration"]["treatments"][1]["parameters"][0]["variationId"] = "nope"
    cases.append((body, "/iteration/treatments/1/parameters/0/variationId"))
    body = experiment_body("x", ["signup"], flag)
    body["iteration"]["treatments"][1]["allocationPercent"] = "5.0001"
    cases.append((body, "/iteration/treatments/1/allocationPercent"))
    body = experiment_body(
        "x", ["signup"], flag, flags={FLAG: {"ruleId": "r9", "flagConfigVersion": 1}}
    )
    cases.append((body, f"/iteration/flags/{FLAG}/ruleId"))
    body = experiment_body(
        "x", ["signup"], flag, flags={"g": {"ruleId": "fallthrough", "flagConfigVersion": 1}}
    )
    cases.append((body, "/iteration/treatments/0/parameters/0/flagKey"))
    body = experiment_body("x", ["signup"], flag, randomizationUnit="organization")
    cases.append((body, "/iteration/metrics/0/key"))
    body = experiment_body("bad key", ["signup"], flag)
    cases.append((body, "/key"))
    for body, path in cases:
        refused = problem(await lab.client.post(EXPERIMENTS, json=body), 400)
        assert refused["path"] == path, (path, refused)
    assert (await lab.client.get(EXPERIMENTS)).json()["total_count"] == 0
    await lab.experiment("ok", ["signup"])
    unknown = problem(await lab.instruct("ok", {"kind": "launch"}), 400)
    assert unknown["path"] == "/instructions/0/kind"
    assert problem(await lab.instruct("ok", {"kind": "stopIteration"}), 409)
    off = await lab.client.patch(
        f"/api/v2/flags/{PROJECT}/{FLAG}",
        content=orjson.dumps(
            {"environmentKey": "production", "instructions": [{"kind": "turnFlagOff"}]}
        ),
        headers={"Content-Type": SEMANTIC},
    )
    assert off.status_code == 200
    refused = problem(await lab.instruct("ok", {"kind": "startIteration"}), 409)
    assert "turn the flag on" in str(refused)
    assert (await lab.flag())["environments"]["production"]["fallthrough"] == {"variation": 0}
    assert problem(await lab.client.delete(f"/api/v2/metrics/{PROJECT}/signup"), 409)


async def test_results_count_first_exposures_and_events_after_them(lab: Lab) -> None:
    await lab.metric(
        key="revenue",
        kind="custom",
        eventKey="purchase",
        isNumeric=True,
        successCriteria="HigherThanBaseline",
    )
    await lab.metric(key="bought", kind="custom", eventKey="purchase")
    created = await lab.experiment("shop", ["revenue", "bought"])
    started = (await lab.instruct("shop", {"kind": "startIteration"})).json()
    version = started["currentIteration"]["flags"][FLAG]["flagConfigVersion"]
    control, new = (t["_id"] for t in created["draftIteration"]["treatments"])
    t = 1_780_000_000_000
    # control (variation 1): a 3, b 0 (no event), c: an event before exposure only
    # new (variation 0): d 5+2 (average 3.5), e 4, f exposed first to new, later to control
    lab.send(
        [
            exposure("a", 1, version, t),
            exposure("b", 1, version, t),
            track("c", "purchase", t - 10, 9.0),
            exposure("c", 1, version, t),
            exposure("d", 0, version, t),
            exposure("e", 0, version, t + 1),
            exposure("f", 0, version, t + 2),
            exposure("f", 1, version, t + 3),
            exposure("old", 0, version - 1, t),  # before the iteration's version
            track("a", "purchase", t + 5, 3.0),
            track("d", "purchase", t + 5, 5.0),
            track("d", "purchase", t + 6, 2.0),
            track("e", "purchase", t + 5, 4.0),
            track("e", "other", t + 5, 100.0),
            track("old", "purchase", t + 5, 50.0),
        ]
    )
    response = await lab.client.get(f"{EXPERIMENTS}/shop/metrics/revenue/results")
    assert response.status_code == 200, response.text
    body = response.json()
    results = {r["treatmentId"]: r for r in body["treatmentResults"]}
    control_values, new_values = [3.0, 0.0, 0.0], [3.5, 4.0, 0.0]
    assert results[control]["units"] == 3
    assert results[new]["units"] == 3
    assert math.isclose(results[control]["dataMean"], 1.0)
    assert math.isclose(results[new]["dataMean"], 7.5 / 3)
    assert math.isclose(results[new]["eventValuesSum"], 11.0)
    assert math.isclose(results[new]["dataStdDev"], float(scipy_stats.tstd(new_values)))
    assert results[control]["baseline"] is True
    expected = expected_results(
        {control: ("Control", control_values), new: ("New", new_values)}, baseline=control
    )
    for treatment, result in results.items():
        for name in ("pValue", "confidenceInterval", "sequentialPValue", "pBest", "mean"):
            assert result[name] == expected[treatment][name], name
    assert results[new]["adjustedPValue"] >= results[new]["pValue"]  # Holm over both metrics
    assert body["metricSeen"] == {"ever": True}
    conversions = (await lab.client.get(f"{EXPERIMENTS}/shop/metrics/bought/results")).json()
    converted = {r["treatmentId"]: r for r in conversions["treatmentResults"]}
    assert math.isclose(converted[control]["dataMean"], 1 / 3)
    assert math.isclose(converted[new]["dataMean"], 2 / 3)

    assert problem(await lab.client.get(f"{EXPERIMENTS}/shop/metrics/nope/results"), 404)
    iteration = started["currentIteration"]["_id"]
    named = await lab.client.get(
        f"{EXPERIMENTS}/shop/metrics/revenue/results", params={"iterationId": iteration}
    )
    assert named.json()["treatmentResults"] == body["treatmentResults"]
    assert problem(
        await lab.client.get(
            f"{EXPERIMENTS}/shop/metrics/revenue/results", params={"iterationId": "x"}
        ),
        404,
    )


async def test_units_over_time_count_each_unit_once_in_the_hour_of_its_first_exposure(
    lab: Lab,
) -> None:
    await lab.metric(key="bought", kind="custom", eventKey="purchase")
    created = await lab.experiment("growth", ["bought"])
    started = (await lab.instruct("growth", {"kind": "startIteration"})).json()
    version = started["currentIteration"]["flags"][FLAG]["flagConfigVersion"]
    control, new = (t["_id"] for t in created["draftIteration"]["treatments"])
    hour = 3_600_000
    t = 494_445 * hour  # the start of an hour
    lab.send(
        [
            exposure("a", 1, version, t + 5),
            exposure("b", 0, version, t + hour - 1),
            exposure("c", 0, version, t + 2 * hour + 7),
            exposure("c", 1, version, t + 3 * hour),  # seen again, later: still new's
            exposure("d", 1, version, t + 2 * hour),
            exposure("old", 0, version - 1, t),  # before the iteration
        ]
    )
    response = await lab.client.get(f"{EXPERIMENTS}/growth/exposures")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["iterationId"] == started["currentIteration"]["_id"]
    assert body["bucketMillis"] == hour
    series = {item["treatmentId"]: item["series"] for item in body["treatments"]}
    assert series[control] == [
        {"time": t, "units": 1},
        {"time": t + 2 * hour, "units": 2},
    ]
    assert series[new] == [
        {"time": t, "units": 1},
        {"time": t + 2 * hour, "units": 2},
    ]
    assert problem(await lab.client.get(f"{EXPERIMENTS}/nope/exposures"), 404)
    unknown = await lab.client.get(f"{EXPERIMENTS}/growth/exposures?iterationId=nope")
    assert problem(unknown, 404)
