"""Shared by the experimentation API tests: the server in-process with an admin token, the
project `p` (`production`, `test`) with the boolean flag `f` turned on in production, and
shortcuts for metrics, experiments and events committed straight into the analytics store."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from flagstaff_server.app import Flagstaff
from flagstaff_server.ingest.record import Kind, Record
from support import experiment_events

ADMIN_TOKEN = "experiments-admin-token"
PROJECT = "p"
FLAG = "f"
ENV = "production"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
PROBLEM = "application/problem+json"
METRICS = f"/api/v2/metrics/{PROJECT}"
EXPERIMENTS = f"/api/v2/projects/{PROJECT}/environments/{ENV}/experiments"
_payload_ids = itertools.count(1)


@dataclass
class Lab:
    server: Flagstaff
    client: httpx.AsyncClient

    async def flag(self) -> dict[str, Any]:
        response = await self.client.get(f"/api/v2/flags/{PROJECT}/{FLAG}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def metric(self, **fields: Any) -> dict[str, Any]:
        response = await self.client.post(METRICS, json=fields)
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body

    async def experiment(self, key: str, metrics: list[str], **iteration: Any) -> dict[str, Any]:
        response = await self.client.post(
            EXPERIMENTS, json=experiment_body(key, metrics, await self.flag(), **iteration)
        )
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body

    async def instruct(self, key: str, *instructions: dict[str, Any]) -> httpx.Response:
        return await self.client.patch(
            f"{EXPERIMENTS}/{key}",
            content=orjson.dumps({"instructions": list(instructions)}),
            headers={"Content-Type": SEMANTIC},
        )

    async def audit(self) -> list[str]:
        response = await self.client.get("/api/v2/auditlog", params={"limit": 100})
        assert response.status_code == 200, response.text
        return [item["accesses"][0]["action"] for item in response.json()["items"]]

    def send(self, events: list[dict[str, Any]]) -> None:
        """Events as an SDK's payload, processed into the analytics store."""
        analytics = self.server.analytics
        assert analytics is not None
        seq = next(_payload_ids)
        record = Record(
            seq=seq,
            received_ms=1_780_000_000_000,
            kind=Kind.ANALYTICS,
            project=PROJECT,
            environment=ENV,
            payload_id=f"test-{seq}",
            payload=orjson.dumps(events),
        )
        analytics.commit(None, [record], now_ms=1_780_000_000_000)


def experiment_body(
    key: str, metrics: list[str], flag: dict[str, Any], **iteration: Any
) -> dict[str, Any]:
    on, off = (v["_id"] for v in flag["variations"])
    return {
        "key": key,
        "name": key.title(),
        "iteration": {
            "hypothesis": "true serves more",
            "metrics": [{"key": m} for m in metrics],
            "treatments": [
                {
                    "name": "Control",
                    "baseline": True,
                    "allocationPercent": "50",
                    "parameters": [{"flagKey": FLAG, "variationId": off}],
                },
                {
                    "name": "New",
                    "baseline": False,
                    "allocationPercent": "50",
                    "parameters": [{"flagKey": FLAG, "variationId": on}],
                },
            ],
            "flags": {FLAG: {"ruleId": "fallthrough", "flagConfigVersion": 1}},
            **iteration,
        },
    }


def exposure(user: str, variation: int, version: int, at: int) -> dict[str, Any]:
    """An exposure to the flag `f`."""
    return experiment_events.exposure(FLAG, user, variation, version, at)


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    return body
