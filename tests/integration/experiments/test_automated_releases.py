"""Progressive and guarded rollouts through the flag's semantic patch and the worker's job, over
memory, SQLite and PostgreSQL: the worker (ticked by the test on its own clock) advances each
stage exactly once with an audit entry; pause and resume; a guarded rollout rolls back on a
regression (audit entry, webhook delivery queued, a notice on the flag), proceeds without one,
and holds on too little telemetry. The metric totals come from a fake aggregator here; the
end-to-end test through the LaunchDarkly SDK is tests/e2e/test_guarded_rollout_sdk.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.services import automated_release_runs
from flagstaff_server.services.experiment_results import MetricScope, Totals
from flagstaff_server.services.ports import Store
from flagstaff_server.worker import Worker
from flagstaff_server.worker.automated_release_job import automated_release_job
from support.in_process import api_server, asgi_client

ADMIN = "release-admin-token"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
FLAG_PATH = "/api/v2/flags/p/f"
RELEASES = "/api/v2/projects/p/flags/f/environments/production/automated-releases"
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@dataclass
class Clock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class FakeTotals:
    """Per (event key, variation index): units, Σx, Σx². What the analytics store would say."""

    values: dict[tuple[str, int], tuple[int, float, float]] = field(default_factory=dict)
    scopes: list[MetricScope] = field(default_factory=list)

    def __call__(self, scope: MetricScope) -> Sequence[Totals]:
        self.scopes.append(scope)
        return [
            Totals(variation, n, s, ss, s)
            for (key, variation), (n, s, ss) in self.values.items()
            if key == scope.metric.event_key
        ]

    def conversions(self, key: str, variation: int, units: int, converted: int) -> None:
        self.values[(key, variation)] = (units, float(converted), float(converted))


@dataclass
class Rig:
    server: Flagstaff
    client: httpx.AsyncClient
    clock: Clock
    totals: FakeTotals

    def worker(self, holder: str = "w1") -> Worker:
        assert self.server.plane is not None
        assert self.server.store is not None
        return Worker(
            self.server.store,
            [automated_release_job(self.server.plane, self.totals)],
            clock=self.clock,
            holder=holder,
        )

    async def patch(self, *instructions: dict[str, Any], comment: str = "") -> httpx.Response:
        body: dict[str, Any] = {"environmentKey": "production", "instructions": list(instructions)}
        if comment:
            body["comment"] = comment
        return await self.client.patch(
            FLAG_PATH, content=orjson.dumps(body), headers={"Content-Type": SEMANTIC}
        )

    async def flag(self) -> dict[str, Any]:
        body: dict[str, Any] = (await self.client.get(FLAG_PATH)).json()
        return body

    async def release(self) -> dict[str, Any]:
        response = await self.client.get(RELEASES)
        assert response.status_code == 200, response.text
        item: dict[str, Any] = response.json()["items"][0]
        return item

    async def actions(self) -> list[str]:
        response = await self.client.get("/api/v2/auditlog", params={"limit": 100})
        return [item["accesses"][0]["action"] for item in response.json()["items"]]


@pytest.fixture
async def rig(store: Store | None, tmp_path: Path) -> AsyncIterator[Rig]:
    clock = Clock()
    async with (
        api_server(tmp_path, admin_token=ADMIN, store=store, clock=clock) as server,
        asgi_client(server.asgi, token=ADMIN) as client,
    ):
        environments = [{"key": "production", "name": "Production", "color": "ff0000"}]
        created = await client.post(
            "/api/v2/projects", json={"key": "p", "name": "P", "environments": environments}
        )
        assert created.status_code == 201, created.text
        flag = await client.post("/api/v2/flags/p", json={"key": "f", "name": "F"})
        assert flag.status_code == 201, flag.text
        metric = {
            "key": "errors",
            "kind": "custom",
            "eventKey": "error",
            "isNumeric": False,
            "successCriteria": "LowerThanBaseline",
        }
        assert (await client.post("/api/v2/metrics/p", json=metric)).status_code == 201
        rig = Rig(server=server, client=client, clock=clock, totals=FakeTotals())
        assert (await rig.patch({"kind": "turnFlagOn"})).status_code == 200
        yield rig


async def start(rig: Rig, kind: str, stages: list[dict[str, int]], **more: Any) -> None:
    flag = await rig.flag()
    new, old = (v["_id"] for v in flag["variations"])
    response = await rig.patch(
        {
            "kind": "startAutomatedRelease",
            "releaseKind": kind,
            "originalVariationId": old,
            "targetVariationId": new,
            "randomizationUnit": "user",
            "stages": stages,
            **more,
        }
    )
    assert response.status_code == 200, response.text


def weights(flag: dict[str, Any]) -> list[int]:
    rollout = flag["environments"]["production"]["fallthrough"]["rollout"]
    return [item["weight"] for item in rollout["variations"]]


async def test_a_progressive_rollout_advances_each_stage_once_with_an_audit_entry(rig: Rig) -> None:
    stages = [{"allocation": a, "durationMillis": 60_000} for a in (1_000, 25_000, 100_000)]
    await start(rig, "progressive", stages)
    flag = await rig.flag()
    assert weights(flag) == [1_000, 99_000]
    assert flag["environments"]["production"]["fallthrough"]["rollout"]["kind"] == "experiment"
    first, second = rig.worker("w1"), rig.worker("w2")
    first.tick()
    assert (await rig.release())["stageIndex"] == 0  # not due yet
    rig.clock.advance(seconds=60)
    first.tick()
    second.tick()  # no lease: nothing
    assert weights(await rig.flag()) == [25_000, 75_000]
    release = await rig.release()
    assert release["stageIndex"] == 1
    # a second step from the record as it was read before the first: nothing happens
    assert rig.server.plane is not None
    stale = list(automated_release_runs.in_progress(rig.server.plane))
    rig.clock.advance(seconds=60)
    first.tick()
    for record in stale:
        assert (
            automated_release_runs.run_step(
                rig.server.plane, rig.totals, record, lambda uow, at: True
            )
            is None
        )
    assert weights(await rig.flag()) == [100_000, 0]
    rig.clock.advance(seconds=60)
    first.tick()
    flag = await rig.flag()
    assert flag["environments"]["production"]["fallthrough"] == {"variation": 0}
    assert flag["environments"]["production"]["_automatedRelease"]["status"] == "completed"
    actions = await rig.actions()
    assert actions.count("advanceAutomatedRelease") == 2
    assert actions.count("completeAutomatedRelease") == 1
    assert actions.count("startAutomatedRelease") == 1


async def test_a_paused_rollout_waits_and_resumes_with_what_was_left_of_its_stage(
    rig: Rig,
) -> None:
    stages = [{"allocation": a, "durationMillis": 60_000} for a in (10_000, 50_000)]
    await start(rig, "progressive", stages)
    worker = rig.worker()
    rig.clock.advance(seconds=20)
    assert (await rig.patch({"kind": "pauseAutomatedRelease"})).status_code == 200
    rig.clock.advance(hours=1)
    worker.tick()
    assert (await rig.release())["status"] == "paused"
    assert (await rig.patch({"kind": "resumeAutomatedRelease"})).status_code == 200
    rig.clock.advance(seconds=39)
    worker.tick()
    assert (await rig.release())["stageIndex"] == 0
    rig.clock.advance(seconds=1)
    worker.tick()
    assert (await rig.release())["stageIndex"] == 1
    assert "pauseAutomatedRelease" in await rig.actions()


async def test_a_guarded_rollout_rolls_back_on_a_regression_with_a_notice_and_a_webhook(
    rig: Rig,
) -> None:
    hook = {"url": "http://127.0.0.1:9/hook", "sign": False, "on": True, "name": "audit"}
    created = await rig.client.post("/api/v2/webhooks", json=hook)
    assert created.status_code in (200, 201), created.text
    webhook_id = created.json()["_id"]
    stages = [{"allocation": 25_000, "durationMillis": 600_000}]
    await start(rig, "guarded", stages, metrics=[{"key": "errors"}], minSampleSize=50)
    rig.totals.conversions("error", 1, units=300, converted=15)  # original: 5 %
    rig.totals.conversions("error", 0, units=100, converted=40)  # new: 40 %
    rig.worker().tick()
    release = await rig.release()
    assert release["status"] == "reverted"
    assert [e["kind"] for e in release["events"]][-2:] == ["regression_detected", "reverted"]
    assert release["lastLook"]["metrics"][0]["sequentialConfidenceInterval"]["lower"] > 0
    flag = await rig.flag()
    config = flag["environments"]["production"]
    assert config["fallthrough"] == {"variation": 1}  # the original
    assert config["_automatedRelease"]["notice"].startswith("Rolled back automatically")
    assert "revertAutomatedRelease" in await rig.actions()
    # the rollback's audit entry is queued for the webhook, like every change
    assert rig.server.store is not None
    with rig.server.store.unit_of_work(read_only=True) as uow:
        [entry] = [e for e in uow.audit.list(limit=100) if e.action == "revertAutomatedRelease"]
        queued = [d.entry for d in uow.deliveries.pending(webhook_id, limit=100)]
    assert entry.id in queued


async def test_a_guarded_rollout_holds_on_too_little_telemetry_and_proceeds_when_it_is_fine(
    rig: Rig,
) -> None:
    stages = [{"allocation": a, "durationMillis": 1_000} for a in (10_000, 50_000)]
    await start(
        rig,
        "guarded",
        stages,
        metrics=[{"key": "errors"}],
        minSampleSize=50,
        extensionDurationMillis=5_000,
    )
    worker = rig.worker()
    rig.totals.conversions("error", 1, units=400, converted=20)
    rig.totals.conversions("error", 0, units=20, converted=1)  # too few new units
    rig.clock.advance(seconds=1)
    worker.tick()
    release = await rig.release()
    assert (release["status"], release["stageIndex"]) == ("in_progress", 0)
    assert release["events"][-1]["kind"] == "stage_extended"
    assert weights(await rig.flag()) == [10_000, 90_000]
    rig.clock.advance(seconds=5)
    worker.tick()  # still too few: extended again, never proceeding blind
    assert [e["kind"] for e in (await rig.release())["events"]].count("stage_extended") == 2
    rig.totals.conversions("error", 0, units=60, converted=3)  # now enough, no regression
    rig.clock.advance(seconds=5)
    worker.tick()
    release = await rig.release()
    assert release["stageIndex"] == 1
    assert weights(await rig.flag()) == [50_000, 50_000]
    # the new stage counts the units exposed from its own flag version on
    version = (await rig.flag())["environments"]["production"]["version"]
    rig.clock.advance(seconds=1)
    worker.tick()
    assert rig.totals.scopes[-1].first_version == version


MEMORY_ONLY = pytest.mark.parametrize("store", ["memory"], indirect=True)
"""Checks of input before anything is stored: one store is enough."""


@MEMORY_ONLY
@pytest.mark.parametrize(
    ("change", "status", "path"),
    [
        ({"stages": []}, 400, "/instructions/0/stages"),
        (
            {"stages": [{"allocation": 60_000, "durationMillis": 1}]},
            400,
            "/instructions/0/stages/0/allocation",
        ),
        ({"metrics": [{"key": "nope"}]}, 400, "/instructions/0/metrics/0/key"),
        ({"metrics": None}, 400, "/instructions/0/metrics"),
        ({"releaseKind": "fast"}, 400, "/instructions/0/releaseKind"),
        ({"ruleId": "no-such-rule"}, 400, "/ruleId"),
    ],
)
async def test_a_bad_start_is_refused_with_the_field_named(
    rig: Rig, change: dict[str, Any], status: int, path: str
) -> None:
    flag = await rig.flag()
    new, old = (v["_id"] for v in flag["variations"])
    instruction = {
        "kind": "startAutomatedRelease",
        "releaseKind": "guarded",
        "originalVariationId": old,
        "targetVariationId": new,
        "randomizationUnit": "user",
        "stages": [{"allocation": 10_000, "durationMillis": 1_000}],
        "metrics": [{"key": "errors"}],
        **change,
    }
    instruction = {k: v for k, v in instruction.items() if v is not None}
    response = await rig.patch(instruction)
    assert response.status_code == status, response.text
    assert response.json()["path"] == path
    assert (await rig.client.get(RELEASES)).json()["totalCount"] == 0


@MEMORY_ONLY
async def test_a_second_start_on_the_same_rule_and_mixed_instructions_are_refused(
    rig: Rig,
) -> None:
    stages = [{"allocation": 10_000, "durationMillis": 1_000}]
    await start(rig, "progressive", stages)
    flag = await rig.flag()
    new, old = (v["_id"] for v in flag["variations"])
    again = {
        "kind": "startAutomatedRelease",
        "releaseKind": "progressive",
        "originalVariationId": old,
        "targetVariationId": new,
        "randomizationUnit": "user",
        "stages": stages,
    }
    assert (await rig.patch(again)).status_code == 409
    mixed = await rig.patch(
        {"kind": "stopAutomatedRelease", "finalVariationId": old}, {"kind": "turnFlagOff"}
    )
    assert mixed.status_code == 400
    assert mixed.json()["path"] == "/instructions"
    stop = await rig.patch({"kind": "stopAutomatedRelease", "finalVariationId": old})
    assert stop.status_code == 200, stop.text
    assert (await rig.release())["status"] == "manually_reverted"
    assert (await rig.flag())["environments"]["production"]["fallthrough"] == {"variation": 1}
