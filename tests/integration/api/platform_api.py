"""Shared by the platform API tests: the admin token and request shortcuts (the settable clock
is support.clock's)."""

from __future__ import annotations

from typing import Any

import httpx

ADMIN_TOKEN = "platform-admin-token"
ADMIN = {"Authorization": ADMIN_TOKEN}
PROBLEM = "application/problem+json"


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """The problem-JSON body of an error answer, after checking its status and shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["code"]
    assert body["message"] == body["detail"]
    assert body["type"].startswith("urn:flagstaff:problem:")
    return body


async def create_project(
    client: httpx.AsyncClient, key: str, headers: dict[str, str] = ADMIN, **body: Any
) -> dict[str, Any]:
    response = await client.post(
        "/api/v2/projects", json={"key": key, "name": key.title(), **body}, headers=headers
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def create_token(
    client: httpx.AsyncClient, role: str, *, project: str | None = None, env: str | None = None
) -> str:
    body: dict[str, Any] = {"name": f"{role} token", "role": role}
    if project is not None:
        body["projectKey"] = project
    if env is not None:
        body["environmentKey"] = env
    response = await client.post("/api/v2/tokens", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    secret: str = response.json()["token"]
    return secret


async def audited(client: httpx.AsyncClient, kind: str) -> list[tuple[str, str, str]]:
    """(action, resource, who) of each audit entry of `kind`, oldest first."""
    log = (await client.get("/api/v2/auditlog", headers=ADMIN)).json()
    return [
        (entry["accesses"][0]["action"], entry["accesses"][0]["resource"], entry["token"]["_id"])
        for entry in reversed(log["items"])
        if entry["kind"] == kind
    ]
