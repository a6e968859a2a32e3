"""Shared by the webhook tests: the admin token, request shortcuts and readers of the outbox and
the audit log."""

from __future__ import annotations

from typing import Any

import httpx
from flagstaff_server.app import Flagstaff
from flagstaff_server.services.webhook_ports import DeliveryRecord

ADMIN_TOKEN = "webhook-admin-token"
PROBLEM = "application/problem+json"
WEBHOOKS = "/api/v2/webhooks"
ALL_FLAGS = "proj/*:env/*:flag/*"


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """The problem-JSON body of an error answer, after checking its status and shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    return body


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


async def create_project(client: httpx.AsyncClient, key: str = "shop") -> None:
    ok(await client.post("/api/v2/projects", json={"key": key, "name": key.title()}), 201)


async def create_flag(
    client: httpx.AsyncClient, key: str, project: str = "shop", **body: Any
) -> dict[str, Any]:
    created: dict[str, Any] = ok(
        await client.post(f"/api/v2/flags/{project}", json={"key": key, "name": key, **body}),
        201,
    )
    return created


async def toggle(
    client: httpx.AsyncClient, key: str, *, on: bool, env: str = "production", project: str = "shop"
) -> None:
    patch = [{"op": "replace", "path": f"/environments/{env}/on", "value": on}]
    ok(await client.patch(f"/api/v2/flags/{project}/{key}", json=patch))


async def create_webhook(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"url": "http://127.0.0.1:9/hook", "sign": True, "on": True, **body}
    created: dict[str, Any] = ok(await client.post(WEBHOOKS, json=values))
    return created


def flag_statement(resource: str = ALL_FLAGS, **fields: Any) -> dict[str, Any]:
    return {"effect": "allow", "actions": ["*"], "resources": [resource], **fields}


def outbox(server: Flagstaff, webhook_id: str) -> list[DeliveryRecord]:
    """The webhook's deliveries, oldest first, straight from the store."""
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        return list(reversed(uow.deliveries.recent(webhook_id, limit=10_000)))


def audit_entries(server: Flagstaff) -> dict[str, Any]:
    """Every audit entry by id."""
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        return {entry.id: entry for entry in uow.audit.list(limit=10_000)}
