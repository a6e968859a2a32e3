"""Admission control on client-side delivery with an injected clock: the client-side stream cap, the
fresh-evaluation budget (503 + Retry-After for evalx, 429 + Retry-After for OFREP), cache hits and
304s never limited, counters on /metrics; and ETags that stay exact for before/after clauses."""

from __future__ import annotations

import base64
import json
from typing import Any

from delivery_support import ENVIRONMENT, SDK_KEY, FixedFeed, change, environment, flag
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery.admission import Admission, Limits
from flagstaff_server.delivery.client_side import ClientDelivery
from support.deadlines import eventually
from support.in_process import asgi_client

AUTH = {"Authorization": SDK_KEY}
SIGNUP_INSTANT = 1_700_000_000_000
"""The `after` clause's instant (ms): contexts that signed up later get the rule's variation."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def after_flag() -> dict[str, Any]:
    rule = {
        "id": "late-signups",
        "variation": 1,
        "clauses": [
            {
                "attribute": "signup",
                "op": "after",
                "values": [SIGNUP_INSTANT],
                "negate": False,
                "contextKind": "user",
            }
        ],
        "trackEvents": False,
    }
    return flag("late", fallthrough=0, rules=[rule])


BACKLOG = [
    change(1, "environment", ENVIRONMENT, environment()),
    change(2, "flag", "a", flag("a")),
    change(3, "flag", "late", after_flag()),
]


def evalx_path(context: dict[str, Any]) -> str:
    encoded = base64.urlsafe_b64encode(json.dumps(context).encode()).decode().rstrip("=")
    return f"/sdk/evalx/contexts/{encoded}"


def user(key: str, **attributes: Any) -> dict[str, Any]:
    return {"kind": "user", "key": key, **attributes}


def node_with(clock: FakeClock, **limits: Any) -> DeliveryNode:
    config = DeliveryConfig(
        limits=Limits(retry_after_seconds=5.0, **limits),
        probe_interval_seconds=0.0,
        probe_timeout_seconds=0.5,
    )
    # No CPU passes on the fixed CPU clock, so no evaluation costs more than its one token and
    # the budget decisions below do not depend on how busy the machine is.
    return DeliveryNode(
        FixedFeed(BACKLOG), config, clock=clock, rng=lambda: 0.5, cpu_clock=lambda: 0.0
    )


def metric_value(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def test_client_streams_are_capped_below_the_node_cap_and_counted() -> None:
    admission = Admission(
        Limits(max_streams=10, max_client_streams=2), clock=FakeClock(), random=lambda: 0.0
    )
    admission.open_streams = admission.open_client_streams = 2
    assert admission.admit_client_stream() is False
    assert admission.admit_stream() is True  # server-side SDKs still have room
    admission.open_client_streams = 1
    assert admission.admit_client_stream() is True
    admission.open_streams = 10
    assert admission.admit_client_stream() is False
    assert admission.counts["client_stream_shed"] == 1
    assert admission.counts["stream_shed"] == 1


def test_fresh_evaluations_get_the_burst_then_the_rate() -> None:
    clock = FakeClock()
    admission = Admission(
        Limits(evaluations_per_second=2, evaluation_burst=3), clock=clock, random=lambda: 0.0
    )
    assert [admission.admit_evaluation() for _ in range(4)] == [True, True, True, False]
    clock.now += 0.5
    assert [admission.admit_evaluation() for _ in range(2)] == [True, False]
    assert admission.counts["client_evaluation"] == 4
    assert admission.counts["client_evaluation_shed"] == 2
    # the full-payload budget of server-side SDKs is untouched by browsers
    assert admission.bucket.tokens == admission.limits.full_send_burst


async def test_new_contexts_beyond_the_budget_get_503_while_cached_ones_pass() -> None:
    clock = FakeClock()
    node = node_with(clock, evaluations_per_second=1, evaluation_burst=2)
    delivery = ClientDelivery(node)
    async with (
        node.lifespan(),
        asgi_client(delivery, base_url="http://n") as client,
        asgi_client(node.app, base_url="http://n") as ops,
    ):
        await eventually(lambda: node.current)
        first = await client.get(evalx_path(user("u1")), headers=AUTH)
        assert first.status_code == 200
        assert (await client.get(evalx_path(user("u2")), headers=AUTH)).status_code == 200
        shed = await client.get(evalx_path(user("u3")), headers=AUTH)
        assert shed.status_code == 503
        assert shed.headers["retry-after"] == "8"  # base 5 plus 5 * rng 0.5
        assert shed.headers["content-type"] == "application/problem+json"

        again = await client.get(evalx_path(user("u1")), headers=AUTH)
        assert (again.status_code, again.json()) == (200, first.json())
        conditional = {**AUTH, "If-None-Match": first.headers["etag"]}
        assert (await client.get(evalx_path(user("u1")), headers=conditional)).status_code == 304

        clock.now += 1.0
        assert (await client.get(evalx_path(user("u3")), headers=AUTH)).status_code == 200

        metrics = (await ops.get("/metrics")).text
        prefix = "flagstaff_delivery_client_"
        assert metric_value(metrics, prefix + 'sheds_total{reason="evaluation_rate"}') == 1
        assert metric_value(metrics, prefix + 'answers_total{outcome="evaluated"}') == 3
        assert metric_value(metrics, prefix + 'answers_total{outcome="cached"}') == 1
        assert metric_value(metrics, prefix + 'answers_total{outcome="not_modified"}') == 1
        assert metric_value(metrics, prefix + 'open_streams{kind="eval"}') == 0


async def test_ofrep_evaluations_beyond_the_budget_get_429_with_retry_after() -> None:
    clock = FakeClock()
    node = node_with(clock, evaluations_per_second=1, evaluation_burst=1)
    async with node.lifespan(), asgi_client(ClientDelivery(node), base_url="http://n") as c:
        await eventually(lambda: node.current)
        body = {"context": {"targetingKey": "u1"}}
        first = await c.post("/ofrep/v1/evaluate/flags", json=body, headers=AUTH)
        assert first.status_code == 200
        limited = await c.post("/ofrep/v1/evaluate/flags/a", json=body, headers=AUTH)
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "8"
        assert limited.json()["errorCode"] == "GENERAL"
        conditional = {**AUTH, "If-None-Match": first.headers["etag"]}
        cached = await c.post("/ofrep/v1/evaluate/flags", json=body, headers=conditional)
        assert cached.status_code == 304
        clock.now += 1.0
        single = await c.post("/ofrep/v1/evaluate/flags/a", json=body, headers=AUTH)
        assert (single.status_code, single.json()["value"]) == (200, True)


async def test_before_after_results_and_etags_follow_the_context_not_the_clock() -> None:
    """`before`/`after` compare a context attribute with the clause's instant; the evaluation
    never reads the clock, so (snapshot, view, context) fixes the result and the ETag is exact."""
    clock = FakeClock()
    node = node_with(clock)
    async with node.lifespan(), asgi_client(ClientDelivery(node), base_url="http://n") as c:
        await eventually(lambda: node.current)
        late = user("u1", signup=SIGNUP_INSTANT + 1)
        early = user("u1", signup=SIGNUP_INSTANT - 1)
        on_time = user("u1", signup=SIGNUP_INSTANT)  # equal instants match neither operator
        answers = [await c.get(evalx_path(ctx), headers=AUTH) for ctx in (late, early, on_time)]
        assert [a.json()["late"]["value"] for a in answers] == [True, False, False]
        assert len({a.headers["etag"] for a in answers}) == 3
        node.wall = lambda: (SIGNUP_INSTANT + 10**9) / 1000.0
        clock.now += 10**6
        later = await c.get(evalx_path(early), headers=AUTH)
        before = answers[1]
        assert (later.headers["etag"], later.json()) == (before.headers["etag"], before.json())
