"""The stores a test runs the control plane over, one fixture for every suite: `store` (memory,
SQLite in the test's directory, PostgreSQL in a session database emptied before each test) and
`server_store` (the same, but SQLite is None: the server opens it in its data directory, as
`flagstaff serve` does). A pytest plugin (tests/conftest.py); a suite that runs over fewer kinds
overrides the fixture with `open_store`/`open_server_store` and its own parameters.

A test's SQLite files start as copies of ones migrated once per session (`sqlite_template`):
the state its own migrations would leave, for a tenth of their cost. Migrating from nothing is
tested where it is the point (tests/contract/test_migration.py, and every `flagstaff serve`
process a test starts on an empty data directory)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.ingest.analytics import AnalyticsStore
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


STORE_FILE = "flagstaff.db"
ANALYTICS_FILE = "analytics.db"
"""The SQLite files a server opens in its data directory (settings.py)."""


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the control plane's and the analytics' SQLite files, each migrated to
    the newest schema and closed (nothing else written)."""
    directory = tmp_path_factory.mktemp("sqlite-template")
    SqlStore(sqlite_url(directory / STORE_FILE)).close()
    analytics = AnalyticsStore(sqlite_url(directory / ANALYTICS_FILE))
    analytics.run(lambda connection: None)  # its first use migrates it
    analytics.close()
    return directory


def seed_sqlite(request: pytest.FixtureRequest, directory: Path, *names: str) -> None:
    """Copy the template's files `names` into `directory` (mode kept: 0600)."""
    template: Path = request.getfixturevalue("sqlite_template")
    for name in names:
        shutil.copy(template / name, directory / name)


def open_store(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Iterator[Store]:
    """A store of `kind`, empty; a SQLite one is closed afterwards."""
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        seed_sqlite(request, tmp_path, STORE_FILE)
        store = SqlStore(sqlite_url(tmp_path / STORE_FILE))
        yield store
        store.close()
    else:
        yield empty_postgres(request.getfixturevalue("postgres_store"))


def open_server_store(request: pytest.FixtureRequest, kind: str) -> Iterator[Store | None]:
    """What to hand a server for `kind`: None for SQLite, which the server opens itself in its
    data directory, the test's `tmp_path` (seeded here with the template's files: its
    analytics SQLite for every kind, the control plane's for SQLite)."""
    data_dir: Path = request.getfixturevalue("tmp_path")
    seed_sqlite(request, data_dir, ANALYTICS_FILE)  # the server's analytics, whatever its store
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        seed_sqlite(request, data_dir, STORE_FILE)
        yield None
    else:
        yield empty_postgres(request.getfixturevalue("postgres_store"))


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    yield from open_store(request, request.param, tmp_path)


@pytest.fixture(params=STORE_KINDS)
def server_store(request: pytest.FixtureRequest) -> Iterator[Store | None]:
    yield from open_server_store(request, request.param)
