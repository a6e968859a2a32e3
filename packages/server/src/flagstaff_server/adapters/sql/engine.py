"""Turns a user's database URL into a configured SQLAlchemy engine: psycopg 3 for PostgreSQL,
SQLite in WAL mode with a busy timeout and transactions that take the write lock up front, its
file readable by its owner only."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from flagstaff_server.errors import InvalidInput

WRITE_OPTION = "flagstaff_write"
"""Connection execution option: False starts a SQLite transaction without the write lock."""

UNAVAILABLE = (OperationalError, InterfaceError, DisconnectionError, PoolTimeout)
"""Driver errors that mean the database cannot be reached (translated to `StoreUnavailable`)."""

_POSTGRES_NAMES = {"postgres", "postgresql", "postgresql+psycopg"}
_BUSY_TIMEOUT_MS = 30_000
_WAL_ATTEMPTS = 50


def database_url(raw: str) -> URL:
    """Parse and normalise a URL: `postgres://` and `postgresql://` use psycopg 3."""
    try:
        url = make_url(raw)
    except ArgumentError as exc:
        raise InvalidInput(f"not a database URL: {raw!r}", path="database") from exc
    if url.drivername in _POSTGRES_NAMES:
        return url.set(drivername="postgresql+psycopg")
    if url.drivername in {"sqlite", "sqlite+pysqlite"}:
        if not url.database or url.database == ":memory:":
            raise InvalidInput("SQLite needs a database file path", path="database")
        return url.set(drivername="sqlite+pysqlite")
    raise InvalidInput(
        f"unsupported database {url.drivername!r}: use sqlite:///PATH or postgresql://...",
        path="database",
    )


def describe_unavailable(engine: Engine, exc: Exception) -> str:
    """The message of a `StoreUnavailable` for `exc`: where (password hidden) and why."""
    where = engine.url.render_as_string(hide_password=True)
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    return f"database {where} unavailable: {reason}"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


def create_store_engine(raw_url: str) -> Engine:
    url = database_url(raw_url)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _sqlite_engine(url: URL) -> Engine:
    assert url.database is not None  # checked by database_url
    Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    keep_private(Path(url.database))
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": _BUSY_TIMEOUT_MS / 1000},
        pool_size=10,
        max_overflow=20,
    )

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own transaction handling is switched off so that BEGIN is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        _enable_wal(cursor)
        # synchronous=FULL: a commit the API acknowledged (and whose seq delivery may have
        # seen) survives a power loss, as on PostgreSQL; NORMAL could hand that seq out again
        for pragma in ("synchronous=FULL", "foreign_keys=ON"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # A deferred transaction that later writes cannot wait for the lock in WAL mode
        # (SQLITE_BUSY at once), so writers take it at BEGIN, where busy_timeout applies.
        write = connection.get_execution_options().get(WRITE_OPTION, True)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def keep_private(database: Path) -> None:
    """Create the database file with mode 0600 before SQLite does (with the umask's 0644): it
    holds SDK keys and access-token hashes. SQLite gives its `-wal` and `-shm` files the database
    file's mode. A file left readable by others (made before this rule) and its `-wal`/`-shm`
    lose that access here. A path that cannot be a database file (a directory, an unwritable
    place) is left to SQLite, whose open fails the way every other store failure does (the
    store unavailable), not with an exception at engine creation."""
    try:
        os.close(os.open(database, os.O_RDWR | os.O_CREAT, 0o600))
    except OSError:
        return
    for path in (
        database,
        database.with_name(database.name + "-wal"),
        database.with_name(database.name + "-shm"),
    ):
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o077:
                path.chmod(mode & 0o700)
        except FileNotFoundError:
            continue
        except PermissionError:  # another user's file: only its owner can tighten it
            continue


def _enable_wal(cursor: Any) -> None:
    """Switch the file to WAL. Doing so needs an exclusive lock that SQLite does not wait for: it
    answers "locked" at once while another connection switches the same new file. The mode sticks
    to the file, so only processes opening a brand-new database together ever retry here."""
    for attempt in range(_WAL_ATTEMPTS):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == _WAL_ATTEMPTS - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
