"""Guarded rollouts end to end through the official LaunchDarkly Python SDK (ldclient) against
the whole server in one process (API, delivery, ingestion, worker; SQLite): simulated users are
evaluated by the SDK and `track` an `error` event at a rate that depends on the variation they
were served; the worker looks at the stage's telemetry at every run (docs/rollouts.md).

- a regression in the new variation (60 % errors against 5 %) is rolled back within the sample
  budget (the users the test is willing to expose), with a notice on the flag and the SDK
  serving the original again;
- without a regression (5 % and 5 %) the release goes through its stages and completes;
- when telemetry stops after the first stage, the second stage holds: it is extended again and
  again and never proceeds.

Stage durations are tiny (100 ms) and the worker polls every 0.2 s; every wait polls."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from flagstaff_server.settings import Settings
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.management import ok

ADMIN = "e2e-guarded-admin-token"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
BUDGET = 600
"""Users the regression test may expose before the rollout must have been rolled back."""
BATCH = 60
MINIMUM = 30
"""minSampleSize: units per variation and stage."""
BASE_ERRORS, BAD_ERRORS = 0.05, 0.60

pytestmark = pytest.mark.slow


@dataclass
class Rig:
    api: httpx.Client
    client: LDClient
    rng: random.Random
    users: int = 0

    def patch(self, flag: str, *instructions: dict[str, Any]) -> dict[str, Any]:
        body = {"environmentKey": "production", "instructions": list(instructions)}
        response = self.api.patch(
            f"/api/v2/flags/shop/{flag}",
            content=orjson.dumps(body),
            headers={"Content-Type": SEMANTIC},
        )
        result: dict[str, Any] = ok(response)
        return result

    def release(self, flag: str) -> dict[str, Any]:
        path = f"/api/v2/projects/shop/flags/{flag}/environments/production/automated-releases"
        item: dict[str, Any] = ok(self.api.get(path))["items"][0]
        return item

    def flag(self, flag: str) -> dict[str, Any]:
        result: dict[str, Any] = ok(self.api.get(f"/api/v2/flags/shop/{flag}"))
        return result

    def sdk_sees_current_version(self, flag: str) -> bool:
        version = self.flag(flag)["environments"]["production"]["version"]
        state = self.client.all_flags_state(Context.create("probe")).to_json_dict()
        return bool(state["$flagsState"].get(flag, {}).get("version") == version)

    def start(self, flag: str, stages: list[dict[str, int]], **more: Any) -> None:
        created = ok(self.api.post("/api/v2/flags/shop", json={"key": flag, "name": flag}))
        new, old = (v["_id"] for v in created["variations"])  # true, false
        serve_old = {"kind": "updateFallthroughVariationOrRollout", "variationId": old}
        self.patch(flag, {"kind": "turnFlagOn"}, serve_old)
        self.patch(
            flag,
            {
                "kind": "startAutomatedRelease",
                "releaseKind": "guarded",
                "originalVariationId": old,
                "targetVariationId": new,
                "randomizationUnit": "user",
                "stages": stages,
                "metrics": [{"key": "errors"}],
                "minSampleSize": MINIMUM,
                **more,
            },
        )
        wait_until(lambda: self.sdk_sees_current_version(flag), what="the SDK to get the stage")

    def serve(self, flag: str, users: int, bad_error_rate: float) -> None:
        """`users` new users evaluated by the SDK; each tracks an error at the rate of the
        variation it got."""
        for _ in range(users):
            self.users += 1
            user = Context.create(f"user-{self.users}")
            detail = self.client.variation_detail(flag, user, False)
            assert detail.reason is not None
            assert detail.reason.get("inExperiment") is True
            rate = bad_error_rate if detail.value else BASE_ERRORS
            if self.rng.random() < rate:
                self.client.track("error", user)
        self.client.flush()


def looked_units(release: dict[str, Any]) -> int:
    look = release.get("lastLook") or {"metrics": []}
    return sum(m["originalUnits"] + m["newUnits"] for m in look["metrics"])


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    data_dir: Path = tmp_path_factory.mktemp("guarded")
    settings = Settings(
        data_dir=data_dir,
        admin_token=ADMIN,
        seed_demo=False,
        worker_poll_seconds=0.2,
        worker_lease_seconds=30,
    )
    with (
        serve_flagstaff(settings) as served,
        httpx.Client(base_url=served.url, headers={"Authorization": ADMIN}, timeout=10) as api,
    ):
        environments = [{"key": "production", "name": "Production", "color": "417505"}]
        project = ok(
            api.post(
                "/api/v2/projects",
                json={"key": "shop", "name": "Shop", "environments": environments},
            )
        )
        metric = {
            "key": "errors",
            "kind": "custom",
            "eventKey": "error",
            "isNumeric": False,
            "successCriteria": "LowerThanBaseline",
        }
        ok(api.post("/api/v2/metrics/shop", json=metric))
        sdk_key = project["environments"][0]["apiKey"]
        config = Config(
            sdk_key,
            base_uri=served.url,
            stream_uri=served.url,
            events_uri=served.url,
            diagnostic_opt_out=True,
            flush_interval=1,
        )
        client = LDClient(config=config, start_wait=30)
        try:
            assert client.is_initialized()
            yield Rig(api=api, client=client, rng=random.Random(17))
        finally:
            client.close()


def test_a_regression_in_the_new_variation_is_rolled_back_within_the_sample_budget(
    rig: Rig,
) -> None:
    flag = "checkout-regressing"
    rig.start(flag, [{"allocation": 50_000, "durationMillis": 3_600_000}])
    sent = 0
    while sent < BUDGET and rig.release(flag)["status"] == "in_progress":
        rig.serve(flag, BATCH, BAD_ERRORS)
        sent += BATCH

        def looked_at_all(expected: int = sent) -> bool:
            release = rig.release(flag)
            return release["status"] != "in_progress" or looked_units(release) >= expected

        wait_until(looked_at_all, timeout=30, what="the worker to look at every exposed user")
    release = rig.release(flag)
    assert release["status"] == "reverted", release["lastLook"]
    [regression] = [e for e in release["events"] if e["kind"] == "regression_detected"]
    [look] = regression["looks"]
    assert look["originalUnits"] + look["newUnits"] <= BUDGET
    assert look["sequentialConfidenceInterval"]["lower"] > 0  # more errors, surely
    config = rig.flag(flag)["environments"]["production"]
    assert config["fallthrough"] == {"variation": 1}  # the original: false
    assert "regressed" in config["_automatedRelease"]["notice"]
    wait_until(lambda: rig.sdk_sees_current_version(flag), what="the SDK to get the rollback")
    detail = rig.client.variation_detail(flag, Context.create("after-rollback"), True)
    assert detail.value is False
    assert not (detail.reason or {}).get("inExperiment")
    log = ok(rig.api.get("/api/v2/auditlog", params={"limit": 50}))["items"]
    assert "revertAutomatedRelease" in [item["accesses"][0]["action"] for item in log]


def test_without_a_regression_the_rollout_goes_through_its_stages_and_completes(
    rig: Rig,
) -> None:
    flag = "checkout-steady"
    stages = [{"allocation": a, "durationMillis": 100} for a in (25_000, 50_000)]
    rig.start(flag, stages, extensionDurationMillis=100)
    for stage in range(len(stages)):
        rig.serve(flag, 4 * BATCH, BASE_ERRORS)

        def moved_on(stage: int = stage) -> bool:
            release = rig.release(flag)
            return release["status"] != "in_progress" or release["stageIndex"] > stage

        wait_until(moved_on, timeout=30, what=f"stage {stage + 1} to pass")
        wait_until(lambda: rig.sdk_sees_current_version(flag), what="the SDK to get the stage")
    release = rig.release(flag)
    assert release["status"] == "completed", release["events"]
    assert rig.flag(flag)["environments"]["production"]["fallthrough"] == {"variation": 0}
    assert rig.client.variation(flag, Context.create("after-completion"), False) is True


def test_when_telemetry_stops_the_stage_holds_and_never_proceeds(rig: Rig) -> None:
    flag = "checkout-quiet"
    stages = [{"allocation": a, "durationMillis": 100} for a in (25_000, 50_000)]
    rig.start(flag, stages, extensionDurationMillis=100)
    rig.serve(flag, 4 * BATCH, BASE_ERRORS)
    wait_until(lambda: rig.release(flag)["stageIndex"] == 1, timeout=30, what="stage 1 to pass")
    # no more users: the second stage has no telemetry of its own

    def extensions() -> int:
        events = rig.release(flag)["events"]
        return sum(1 for e in events if e["kind"] == "stage_extended" and e["stageIndex"] == 1)

    wait_until(lambda: extensions() >= 3, timeout=30, what="the second stage to be held")
    release = rig.release(flag)
    assert (release["status"], release["stageIndex"]) == ("in_progress", 1)
    rollout = rig.flag(flag)["environments"]["production"]["fallthrough"]["rollout"]
    assert [v["weight"] for v in rollout["variations"]] == [50_000, 50_000]
