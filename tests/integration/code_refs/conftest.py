"""The whole server in-process (role `api`) over memory, SQLite and PostgreSQL (`server_store`,
support/stores.py), with the project `p` (one environment) and the flags `used` and `unused`,
both archived-able by the tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from code_refs_api import ADMIN_TOKEN, PROJECT
from flagstaff_server.services.ports import Store
from support.in_process import api_server, asgi_client


@pytest.fixture
async def client(server_store: Store | None, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        api_server(tmp_path, admin_token=ADMIN_TOKEN, store=server_store) as server,
        asgi_client(server.asgi, token=ADMIN_TOKEN) as client,
    ):
        created = await client.post(
            "/api/v2/projects",
            json={
                "key": PROJECT,
                "name": "P",
                "environments": [{"key": "production", "name": "Production", "color": "ff0000"}],
            },
        )
        assert created.status_code == 201, created.text
        for key in ("used", "unused"):
            flag = await client.post(f"/api/v2/flags/{PROJECT}", json={"key": key, "name": key})
            assert flag.status_code == 201, flag.text
        yield client
