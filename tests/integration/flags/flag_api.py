"""Helpers for the flag API integration tests: constants and request shortcuts."""

from __future__ import annotations

from typing import Any

import httpx

ADMIN_TOKEN = "integration-admin-token"
PROJECT = "p"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"


async def create_flag(api: httpx.AsyncClient, key: str, **body: Any) -> dict[str, Any]:
    response = await api.post(f"/api/v2/flags/{PROJECT}", json={"key": key, "name": key, **body})
    assert response.status_code == 201, response.text
    flag: dict[str, Any] = response.json()
    return flag


async def patch(
    api: httpx.AsyncClient, path: str, body: Any, *, semantic: bool = False, **headers: str
) -> httpx.Response:
    content_type = SEMANTIC if semantic else "application/json"
    return await api.patch(path, json=body, headers={"Content-Type": content_type, **headers})
