"""The management API in-process (httpx ASGI transport) over each store (`store`, from
support/stores.py: memory, SQLite, and PostgreSQL emptied before each test), with an admin token
and a project `p` whose environments are `production` and `test`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from flag_api import ADMIN_TOKEN, PROJECT
from flagstaff_server.http.api.application import build_api
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import Store
from support.in_process import asgi_client, control_plane


@pytest.fixture
def plane(store: Store) -> ControlPlane:
    return control_plane(store, admin_token=ADMIN_TOKEN)


@pytest.fixture
async def api(plane: ControlPlane) -> AsyncIterator[httpx.AsyncClient]:
    app = build_api(plane, version="test")
    async with asgi_client(app, token=ADMIN_TOKEN) as client:
        created = await client.post("/api/v2/projects", json={"key": PROJECT, "name": "P"})
        assert created.status_code == 201, created.text
        yield client
