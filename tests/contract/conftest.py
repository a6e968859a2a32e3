"""Fixtures of the contract suite: every store (memory, SQLite, PostgreSQL: `store` is
support/stores.py's, over the `postgres_store` here) and every change feed
(in-process, Redis) behind the same names. Service backends use a throwaway database or stream
key and clean it up; when the service is unreachable they skip locally and fail in CI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_backends import PostgresServer
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from support.services import postgres_admin, redis_stream_key
from support.stores import SQL_KINDS


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    admin = postgres_admin()
    server = PostgresServer(admin)
    try:
        yield server
    finally:
        server.drop_all()
        admin.close()


@pytest.fixture(scope="session")
def postgres_store(postgres_server: PostgresServer) -> Iterator[SqlStore]:
    store = SqlStore(postgres_server.create_database())
    yield store
    store.close()


@pytest.fixture(params=SQL_KINDS)
def sql_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh, empty database."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "fresh.db")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.create_database()


@pytest.fixture
def redis_stream() -> Iterator[str]:
    """A stream key no other test uses; deleted afterwards."""
    with redis_stream_key() as key:
        yield key
