"""The machine's PostgreSQL and Redis as tests use them: where they are, throwaway databases and
stream keys of a test's own (removed afterwards), and emptying a store's tables. An unreachable
service is a missing prerequisite: skipped locally, a failure in CI.

Test support shared by the contract, API, flags, relay and scale-out tests; asserts nothing.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import redis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.store import SqlStore
from support.prerequisites import missing_prerequisite

POSTGRES_ADMIN_URL = os.environ.get(
    "FLAGSTAFF_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("FLAGSTAFF_TEST_REDIS", "redis://127.0.0.1:6379/0")


def postgres_admin() -> psycopg.Connection[Any]:
    """An autocommit connection to the test PostgreSQL server, for creating databases."""
    try:
        return psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        missing_prerequisite(f"PostgreSQL unreachable at {POSTGRES_ADMIN_URL}: {exc}")
        raise  # unreachable: missing_prerequisite skips or fails


@contextmanager
def postgres_database(prefix: str = "flagstaff_test") -> Iterator[str]:
    """The URL of a new database named `<prefix>_<random>`, dropped afterwards (with whatever
    connections are still open to it)."""
    admin = postgres_admin()
    name = f"{prefix}_{secrets.token_hex(6)}"
    admin.execute(f'CREATE DATABASE "{name}"')
    info = admin.info
    try:
        yield f"postgresql://{info.user}@{info.host}:{info.port}/{name}"
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def empty_postgres(store: SqlStore) -> SqlStore:
    """Remove every row of `store`'s tables and restart its change sequence; returns the store."""
    tables = ", ".join(t.name for t in schema.metadata.sorted_tables if t.name != "change_counter")
    with store.engine.begin() as connection:
        connection.exec_driver_sql(f"TRUNCATE {tables} CASCADE")
        connection.exec_driver_sql("UPDATE change_counter SET seq = 0, epoch = 1")
    return store


def redis_client(url: str = REDIS_URL) -> redis.Redis:
    """A client of the Redis at `url`, which has just answered a PING."""
    client = redis.Redis.from_url(url, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        missing_prerequisite(f"Redis unreachable at {url}: {exc}")
        raise  # unreachable: missing_prerequisite skips or fails
    return client


@contextmanager
def redis_stream_key() -> Iterator[str]:
    """A change-stream key on the test Redis that no other test uses, deleted afterwards."""
    client = redis_client()
    key = f"flagstaff-test:{secrets.token_hex(6)}:changes"
    try:
        yield key
    finally:
        client.delete(key)
        client.close()
