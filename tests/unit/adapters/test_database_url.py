"""Database URLs from users: normalised to our drivers, refused clearly when unusable, and an
unreachable server surfaces as StoreUnavailable."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.adapters.sql.engine import database_url, sqlite_url
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.errors import InvalidInput, StoreUnavailable


@pytest.mark.parametrize(
    "raw",
    [
        "postgresql://u:pw@db.internal:5433/flags",
        "postgres://u:pw@db.internal:5433/flags",
        "postgresql+psycopg://u:pw@db.internal:5433/flags",
    ],
)
def test_postgres_urls_use_psycopg_3(raw: str) -> None:
    url = database_url(raw)
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.username) == ("db.internal", 5433, "flags", "u")


def test_sqlite_file_url_is_kept(tmp_path: Path) -> None:
    url = database_url(sqlite_url(tmp_path / "x.db"))
    assert url.get_backend_name() == "sqlite"
    assert url.database == str(tmp_path / "x.db")


@pytest.mark.parametrize(
    "raw", ["mysql://u@h/db", "sqlite://", "sqlite:///:memory:", "not a url", "oracle://x"]
)
def test_unusable_urls_are_refused_naming_the_option(raw: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        database_url(raw)
    assert refused.value.path == "database"


def test_an_unreachable_postgres_is_store_unavailable_without_the_password() -> None:
    with pytest.raises(StoreUnavailable) as unavailable:
        SqlStore("postgresql://someone:secret@127.0.0.1:1/flags?connect_timeout=2")
    assert "secret" not in unavailable.value.message
    assert "127.0.0.1:1" in unavailable.value.message


def test_sqlite_creates_the_data_directory(tmp_path: Path) -> None:
    store = SqlStore(sqlite_url(tmp_path / "new" / "dir" / "flagstaff.db"))
    try:
        store.ping()
        with store.unit_of_work(read_only=True) as uow:
            assert uow.projects.list() == []
    finally:
        store.close()


def test_connect_later_opens_without_the_database_and_still_reports_it() -> None:
    store = SqlStore("postgresql://someone@127.0.0.1:1/flags?connect_timeout=2", connect_later=True)
    try:
        with pytest.raises(StoreUnavailable):
            store.ping()
        with pytest.raises(StoreUnavailable), store.unit_of_work(read_only=True):
            pass
    finally:
        store.close()
