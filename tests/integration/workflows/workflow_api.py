"""Shared by the release-workflow tests: the admin token, a settable clock, the project `p`
(environments `production` and `test`) with the boolean flag `f`, and request shortcuts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from flagstaff_server.app import Flagstaff
from flagstaff_server.worker import Worker
from flagstaff_server.worker.scheduled_change_job import scheduled_change_job
from support.clock import FakeClock

ADMIN_TOKEN = "workflow-admin-token"
PROJECT = "p"
FLAG = "f"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
PROBLEM = "application/problem+json"
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def schedules_path(environment: str = "production", flag: str = FLAG) -> str:
    return f"/api/v2/projects/{PROJECT}/flags/{flag}/environments/{environment}/scheduled-changes"


@dataclass
class Workflows:
    """The server under test, a client with the admin token, its clock, and workers of its own
    (ticked by the test; none runs in the background)."""

    server: Flagstaff
    client: httpx.AsyncClient
    clock: FakeClock
    workers: list[Worker] = field(default_factory=list)

    def worker(self, holder: str = "w1") -> Worker:
        assert self.server.plane is not None
        assert self.server.store is not None
        worker = Worker(
            self.server.store,
            [scheduled_change_job(self.server.plane)],
            clock=self.clock,
            holder=holder,
            lease_ttl=timedelta(seconds=30),
        )
        self.workers.append(worker)
        return worker

    async def schedule(
        self,
        instructions: list[dict[str, Any]],
        *,
        at: int,
        environment: str = "production",
        comment: str | None = None,
        query: str = "",
    ) -> httpx.Response:
        body: dict[str, Any] = {"executionDate": at, "instructions": instructions}
        if comment is not None:
            body["comment"] = comment
        return await self.client.post(schedules_path(environment) + query, json=body)

    async def flag(self) -> dict[str, Any]:
        response = await self.client.get(f"/api/v2/flags/{PROJECT}/{FLAG}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def audit(self) -> list[dict[str, Any]]:
        """The audit log's entries, newest first."""
        response = await self.client.get("/api/v2/auditlog", params={"limit": 100})
        assert response.status_code == 200, response.text
        # each entry with its (first) action beside it, for filtering
        return [
            {**item, "action": item["accesses"][0]["action"]} for item in response.json()["items"]
        ]


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    return body
