"""The stores a test runs the control plane over, one fixture for every suite: `store` (memory,
SQLite in the test's directory, PostgreSQL in a session database emptied before each test) and
`server_store` (the same, but SQLite is None: the server opens it in its data directory, as
`flagstaff serve` does). A pytest plugin (tests/conftest.py); a suite that runs over fewer kinds
overrides the fixture with `open_store`/`open_server_store` and its own parameters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.ports import Store

from support.services import empty_postgres, postgres_database

STORE_KINDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.service)]
SQL_KINDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.service)]
LOCAL_KINDS = ["memory", "sqlite"]
"""For suites whose storage the contract suite already covers on PostgreSQL."""


@pytest.fixture(scope="session")
def postgres_store() -> Iterator[SqlStore]:
    """One store of this session over a database of its own, dropped afterwards."""
    with postgres_database("flagstaff_store") as url:
        store = SqlStore(url)
        yield store
        store.close()


def open_store(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Iterator[Store]:
    """A store of `kind`, empty; a SQLite one is closed afterwards."""
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        store = SqlStore(sqlite_url(tmp_path / "flagstaff.db"))
        yield store
        store.close()
    else:
        yield empty_postgres(request.getfixturevalue("postgres_store"))


def open_server_store(request: pytest.FixtureRequest, kind: str) -> Iterator[Store | None]:
    """What to hand a server for `kind`: None for SQLite, which the server opens itself."""
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        yield None
    else:
        yield empty_postgres(request.getfixturevalue("postgres_store"))


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    yield from open_store(request, request.param, tmp_path)


@pytest.fixture(params=STORE_KINDS)
def server_store(request: pytest.FixtureRequest) -> Iterator[Store | None]:
    yield from open_server_store(request, request.param)
