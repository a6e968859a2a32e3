"""The SQLite files are readable by their owner only: the control plane's holds SDK keys and
access-token hashes, the analytics one contexts. Before, both were made with the umask's 0644,
and so were their `-wal` and `-shm` files."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from flagstaff_server.adapters.sql.engine import sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest.analytics import AnalyticsStore


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The umask most systems run services with, which alone would give 0644."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def modes(database: Path) -> dict[str, int]:
    """The mode of the database file and of its `-wal` and `-shm` files where they exist."""
    files = [database, *(database.with_name(database.name + end) for end in ("-wal", "-shm"))]
    return {path.name: stat.S_IMODE(path.stat().st_mode) for path in files if path.exists()}


def test_a_new_store_database_and_its_wal_files_are_0600(tmp_path: Path) -> None:
    database = tmp_path / "data" / "flagstaff.db"
    store = SqlStore(sqlite_url(database))  # migrating writes, so the WAL files exist
    try:
        assert modes(database) == {
            "flagstaff.db": 0o600,
            "flagstaff.db-wal": 0o600,
            "flagstaff.db-shm": 0o600,
        }
    finally:
        store.close()


def test_a_new_analytics_database_is_0600(tmp_path: Path) -> None:
    database = tmp_path / "analytics.db"
    analytics = AnalyticsStore(sqlite_url(database))
    try:
        found = modes(database)
        assert found["analytics.db"] == 0o600
        assert set(found.values()) == {0o600}
    finally:
        analytics.close()


def test_a_database_made_readable_by_others_is_tightened_when_opened(tmp_path: Path) -> None:
    database = tmp_path / "flagstaff.db"
    SqlStore(sqlite_url(database)).close()
    for path in (database, database.with_name("flagstaff.db-wal")):
        path.touch()
        path.chmod(0o644)
    store = SqlStore(sqlite_url(database))
    try:
        assert set(modes(database).values()) == {0o600}
    finally:
        store.close()


def test_a_path_that_cannot_be_a_database_leaves_the_analytics_store_unavailable(
    tmp_path: Path,
) -> None:
    # Creating the file 0600 first must not turn a bad path into an error at construction:
    # an ingest node starts with its analytics store down and keeps journaling.
    directory = tmp_path / "analytics-is-a-directory"
    directory.mkdir()
    store = AnalyticsStore(sqlite_url(directory))
    try:
        with pytest.raises(StoreUnavailable):
            store.position("node")
    finally:
        store.close()
