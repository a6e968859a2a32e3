"""What the contract suite runs against: the backend kinds, where the services are, throwaway
PostgreSQL databases, and opening a store of each kind. Fixtures built on these are in
conftest.py; test modules import from here (conftest module names collide)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.ports import Store
from support.services import empty_postgres


class PostgresServer:
    """Creates and drops throwaway databases on the test PostgreSQL server."""

    def __init__(self, admin: psycopg.Connection[Any]) -> None:
        self._admin = admin
        self._created: list[str] = []

    def create_database(self, url: str | None = None) -> str:
        """Create a new database (named by `url`, or a random name) and return its URL."""
        name = url.rsplit("/", 1)[1] if url else f"flagstaff_test_{secrets.token_hex(6)}"
        self._admin.execute(f'CREATE DATABASE "{name}"')
        if name not in self._created:
            self._created.append(name)
        info = self._admin.info
        return f"postgresql://{info.user}@{info.host}:{info.port}/{name}"

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self._admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def drop_all(self) -> None:
        for name in self._created:
            self._admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


STORE_KINDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.service)]
SQL_KINDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


def open_store(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Iterator[Store]:
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        store = SqlStore(sqlite_url(tmp_path / "flagstaff.db"))
        yield store
        store.close()
    else:
        postgres: SqlStore = request.getfixturevalue("postgres_store")
        empty_postgres(postgres)
        yield postgres
