"""The machine's PostgreSQL and Redis as tests use them: where they are, throwaway databases,
stream keys and Redis databases of a test's own (removed afterwards), emptying a store's tables,
and a Redis URL nothing answers. An unreachable service is a missing prerequisite: skipped
locally, a failure in CI. Never stops, reconfigures or flushes the shared servers."""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import redis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.store import SqlStore

from support.ports import free_port
from support.prerequisites import missing_prerequisite

POSTGRES_ADMIN_URL = os.environ.get(
    "FLAGSTAFF_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("FLAGSTAFF_TEST_REDIS", "redis://127.0.0.1:6379/0")
STREAM_KEY = "flagstaff:changes"
"""The change stream every `flagstaff serve` uses (`redis_database` gives each test its own)."""


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
    """Remove every row of `store`'s tables and restart its change sequence; returns the store.
    DELETE, children before parents, not TRUNCATE: a test leaves a few rows, and TRUNCATE's cost
    per table (new files for each) made emptying the 29 tables take 0.4-1 s, DELETE 0.01 s."""
    tables = [t.name for t in reversed(schema.metadata.sorted_tables) if t.name != "change_counter"]
    with store.engine.begin() as connection:
        for table in tables:
            connection.exec_driver_sql(f"DELETE FROM {table}")
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


@contextmanager
def redis_database() -> Iterator[str]:
    """The URL of a Redis logical database whose change stream no other test is using; the
    stream is deleted afterwards. Every `flagstaff serve` uses the same stream key, so separate
    databases keep the tests' sequence numbers apart."""
    base = REDIS_URL.rsplit("/", 1)[0]
    redis_client().close()
    # databases 1-10: bench/delivery takes 11 without claiming it
    for number in random.sample(range(1, 11), 10):
        url = f"{base}/{number}"
        client = redis.Redis.from_url(url, socket_connect_timeout=3)
        # SET NX claims the database; a stream left behind by a crashed run is removed below
        if client.set(f"flagstaff-test:claim:{number}", "1", nx=True, ex=600):
            client.delete(STREAM_KEY)
            try:
                yield url
            finally:
                client.delete(STREAM_KEY, f"flagstaff-test:claim:{number}")
                client.close()
            return
        client.close()
    raise AssertionError("no free Redis database for this test")


def dead_redis_url() -> str:
    """A Redis URL nothing listens on."""
    return f"redis://127.0.0.1:{free_port()}/0"
