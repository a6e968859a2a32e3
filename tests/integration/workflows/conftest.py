"""The whole server in-process (role `api`: no worker in the background; tests tick workers of
their own on the injected clock) over memory, SQLite and PostgreSQL, with the project `p`
(`production`, `test`) and the boolean flag `f`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.ports import Store
from support.in_process import api_server, asgi_client
from support.services import empty_postgres, postgres_database
from workflow_api import ADMIN_TOKEN, FLAG, PROJECT, FakeClock, Workflows

STORE_KINDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


@pytest.fixture(scope="session")
def postgres_store() -> Iterator[SqlStore]:
    with postgres_database("flagstaff_workflows") as url:
        store = SqlStore(url)
        yield store
        store.close()


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest) -> Iterator[Store | None]:
    if request.param == "memory":
        yield InMemoryStore()
    elif request.param == "postgresql":
        yield empty_postgres(request.getfixturevalue("postgres_store"))
    else:
        yield None  # the server opens SQLite in its data directory


@pytest.fixture
async def workflows(store: Store | None, tmp_path: Path) -> AsyncIterator[Workflows]:
    clock = FakeClock()
    async with (
        api_server(tmp_path, admin_token=ADMIN_TOKEN, store=store, clock=clock) as server,
        asgi_client(server.asgi, token=ADMIN_TOKEN) as client,
    ):
        created = await client.post(
            "/api/v2/projects",
            json={
                "key": PROJECT,
                "name": "P",
                "environments": [
                    {"key": "production", "name": "Production", "color": "ff0000"},
                    {"key": "test", "name": "Test", "color": "00ff00"},
                ],
            },
        )
        assert created.status_code == 201, created.text
        flag = await client.post(f"/api/v2/flags/{PROJECT}", json={"key": FLAG, "name": "F"})
        assert flag.status_code == 201, flag.text
        yield Workflows(server=server, client=client, clock=clock)
