"""The whole server in-process (role `api`: no worker in the background; tests tick workers of
their own on the injected clock) over memory, SQLite and PostgreSQL, with the project `p`
(`production`, `test`) and the boolean flag `f`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from flagstaff_server.services.ports import Store
from support.in_process import add_project_with_flag, api_server, asgi_client
from workflow_api import ADMIN_TOKEN, FLAG, PROJECT, T0, FakeClock, Workflows


@pytest.fixture
async def workflows(server_store: Store | None, tmp_path: Path) -> AsyncIterator[Workflows]:
    clock = FakeClock(T0)
    async with (
        api_server(tmp_path, admin_token=ADMIN_TOKEN, store=server_store, clock=clock) as server,
        asgi_client(server.asgi, token=ADMIN_TOKEN) as client,
    ):
        await add_project_with_flag(client, PROJECT, FLAG)
        yield Workflows(server=server, client=client, clock=clock)
