"""Fixtures of the contract suite: every store (memory, SQLite, PostgreSQL) and every change feed
(in-process, Redis) behind the same names. Service backends use a throwaway database or stream
key and clean it up; when the service is unreachable they skip locally and fail in CI."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis
from contract_backends import (
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    SQL_KINDS,
    STORE_KINDS,
    PostgresServer,
    open_store,
)
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.services.ports import Store
from prerequisites import missing_prerequisite


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    try:
        admin = psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        missing_prerequisite(f"PostgreSQL unreachable at {POSTGRES_ADMIN_URL}: {exc}")
        raise  # unreachable: missing_prerequisite skips or fails
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


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    yield from open_store(request, request.param, tmp_path)


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
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        missing_prerequisite(f"Redis unreachable at {REDIS_URL}: {exc}")
        raise
    key = f"flagstaff-test:{secrets.token_hex(6)}:changes"
    try:
        yield key
    finally:
        client.delete(key)
        client.close()
