"""The management API in-process (httpx ASGI transport) over each store (memory, SQLite, and
PostgreSQL in a throwaway database emptied before each test), with an admin token and a project
`p` whose environments are `production` and `test`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from flag_api import ADMIN_TOKEN, PROJECT
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.http.api.application import build_api
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import Store
from support.in_process import asgi_client, control_plane
from support.services import empty_postgres, postgres_database

STORE_KINDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh database for this session, dropped afterwards."""
    with postgres_database("flagstaff_flags") as url:
        yield url


@pytest.fixture(scope="session")
def postgres_store(postgres_url: str) -> Iterator[SqlStore]:
    store = SqlStore(postgres_url)
    yield store
    store.close()


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    if request.param == "postgresql":
        yield empty_postgres(request.getfixturevalue("postgres_store"))
        return
    sql = SqlStore(sqlite_url(tmp_path / "flagstaff.db"))
    yield sql
    sql.close()


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
