"""Bounds of one evaluation request on client-side delivery: contexts over a size limit answer
4xx before anything is evaluated (413 body, 414 path, 400 naming the place), a context whose
evaluation would take more than the CPU budget answers 413 without being cached, and every fresh
evaluation is charged the CPU it took against the evaluation rate."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from delivery_support import ENVIRONMENT, SDK_KEY, FixedFeed, change, environment, flag
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery.admission import Admission, Limits
from flagstaff_server.delivery.client_side import ClientDelivery
from support.deadlines import eventually
from support.in_process import asgi_client

AUTH = {"Authorization": SDK_KEY}
MOBILE = {"usingMobileKey": True, "usingEnvironmentId": False}
BACKLOG = [
    change(1, "environment", ENVIRONMENT, environment()),
    change(2, "flag", "a", {**flag("a"), "clientSideAvailability": MOBILE}),
    change(3, "flag", "b", flag("b")),
]


class FakeClock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def evalx_path(context: Any) -> str:
    encoded = base64.urlsafe_b64encode(json.dumps(context).encode()).decode().rstrip("=")
    return f"/sdk/evalx/contexts/{encoded}"


@asynccontextmanager
async def delivery(**limits: Any) -> AsyncIterator[tuple[DeliveryNode, httpx.AsyncClient]]:
    config = DeliveryConfig(
        limits=Limits(**limits), probe_interval_seconds=0.0, probe_timeout_seconds=0.5
    )
    node = DeliveryNode(FixedFeed(BACKLOG), config, clock=FakeClock(), rng=lambda: 0.5)
    async with node.lifespan(), asgi_client(ClientDelivery(node), base_url="http://n") as c:
        await eventually(lambda: node.current)
        yield node, c


async def test_contexts_over_a_limit_get_4xx_naming_the_place_before_evaluation() -> None:
    async with delivery() as (node, client):
        long_list = {"kind": "user", "key": "u", "tags": ["t"] * 257}
        answer = await client.get(evalx_path(long_list), headers=AUTH)
        assert answer.status_code == 400
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.json()["path"] == "/tags"

        deep: Any = "x"
        for _ in range(300):  # deeper than orjson encodes: this was a 500
            deep = {"d": deep}
        answer = await client.get(evalx_path({"kind": "user", "key": "u", "n": deep}), headers=AUTH)
        assert answer.status_code == 400
        assert answer.json()["path"].startswith("/n/d/d/")

        huge = {"kind": "user", "key": "u", "s": "x" * 40_000}
        assert (await client.get(evalx_path(huge), headers=AUTH)).status_code == 414
        report = await client.request(
            "REPORT",
            "/sdk/evalx/context",
            content=json.dumps(huge),
            headers={**AUTH, "Content-Type": "application/json"},
        )
        assert (report.status_code, report.json()["code"]) == (413, "payload_too_large")

        ofrep = {"context": {"targetingKey": "u", "email": "e" * 9_000}}
        bad = await client.post("/ofrep/v1/evaluate/flags", json=ofrep, headers=AUTH)
        assert (bad.status_code, bad.json()["errorCode"]) == (400, "INVALID_CONTEXT")
        assert bad.json()["errorDetails"].startswith("/context/email: a string of 9000")

        assert node.admission.counts["client_evaluation"] == 0  # nothing was evaluated
        fine = {"kind": "user", "key": "u", "tags": ["t"] * 256, "s": "x" * 8_192}
        assert (await client.get(evalx_path(fine), headers=AUTH)).status_code == 200


async def test_a_context_over_the_cpu_budget_gets_413_and_is_not_cached() -> None:
    # a zero budget is spent before the first flag, whatever the machine's speed
    async with delivery(evaluation_cpu_seconds=0.0) as (node, client):
        path = evalx_path({"kind": "user", "key": "u"})
        for _ in range(2):
            answer = await client.get(path, headers=AUTH)
            assert (answer.status_code, answer.json()["path"]) == (413, "context")
            assert "ms of CPU" in answer.json()["message"]
        bulk = await client.post(
            "/ofrep/v1/evaluate/flags", json={"context": {"targetingKey": "u"}}, headers=AUTH
        )
        assert bulk.status_code == 413
        meval = path.replace("/sdk/evalx/contexts/", "/meval/")
        stream = await client.get(meval, headers={"Authorization": "mob-x"})
        assert stream.status_code == 413
        assert node.admission.counts["client_evaluation_too_costly"] == 4
        assert node.admission.counts["client_evaluation"] == 4  # each one was evaluated again
    async with delivery() as (_node, client):
        assert (await client.get(path, headers=AUTH)).status_code == 200


def test_an_evaluation_is_charged_the_cpu_it_took() -> None:
    clock, cpu = FakeClock(), FakeClock(0.0)
    limits = Limits(evaluations_per_second=10, evaluation_burst=20)
    admission = Admission(limits, clock=clock, random=lambda: 0.0, cpu_clock=cpu)
    assert admission.admit_evaluation()
    admission.charge_evaluation(0.0002)  # under one token: nothing more
    assert admission.evaluations.tokens == 19
    assert admission.admit_evaluation()
    admission.charge_evaluation(0.01)  # 20 tokens' worth: 19 more
    assert admission.evaluations.tokens == -1
    assert not admission.admit_evaluation()
    clock.now += 0.2  # two tokens back: one repays the debt, one is spent
    assert admission.admit_evaluation()
    assert not admission.admit_evaluation()


def test_the_budget_runs_on_the_cpu_clock() -> None:
    cpu = FakeClock(5.0)
    admission = Admission(
        Limits(evaluation_cpu_seconds=0.02), clock=FakeClock(), random=lambda: 0.0, cpu_clock=cpu
    )
    keep_going = admission.evaluation_budget()
    assert keep_going()
    cpu.now += 0.019
    assert keep_going()
    cpu.now += 0.002
    assert not keep_going()
