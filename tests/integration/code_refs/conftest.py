"""The whole server in-process (role `api`) over memory, SQLite and PostgreSQL, with the project
`p` (one environment) and the flags `used` and `unused`, both archived-able by the tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from code_refs_api import ADMIN_TOKEN, PROJECT
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.ports import Store
from support.in_process import api_server, asgi_client
from support.services import empty_postgres, postgres_database

STORE_KINDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


@pytest.fixture(scope="session")
def postgres_store() -> Iterator[SqlStore]:
    with postgres_database("flagstaff_code_refs") as url:
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
async def client(store: Store | None, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        api_server(tmp_path, admin_token=ADMIN_TOKEN, store=store) as server,
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
