"""The SQL schema contract: migrations build exactly the tables the store queries, and opening a
database is idempotent and safe when several processes start at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from contract_backends import PostgresServer
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.engine import create_store_engine
from flagstaff_server.adapters.sql.migration import VERSION_TABLE, upgrade
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.services.ports import AuditEntry
from sqlalchemy import inspect

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_migrated_database_matches_the_schema_the_store_uses(sql_url: str) -> None:
    store = SqlStore(sql_url)
    try:
        with store.engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"version_table": VERSION_TABLE, "compare_type": True}
            )
            assert compare_metadata(context, schema.metadata) == []
            assert context.get_current_revision() is not None
    finally:
        store.close()


def test_opening_twice_changes_nothing(sql_url: str) -> None:
    first = SqlStore(sql_url)
    first.close()
    second = SqlStore(sql_url)
    try:
        tables = set(inspect(second.engine).get_table_names())
        assert tables == {t.name for t in schema.metadata.sorted_tables} | {VERSION_TABLE}
        with second.unit_of_work(read_only=True) as uow:
            assert uow.changes.latest_seq() == 0
    finally:
        second.close()


def test_processes_starting_together_migrate_once(sql_url: str) -> None:
    starters = 4
    barrier = threading.Barrier(starters)

    def start(_: int) -> int:
        barrier.wait()
        store = SqlStore(sql_url)  # its own engine and connections, like another process
        try:
            with store.unit_of_work() as uow:
                return uow.changes.append(
                    project="p",
                    environment="e",
                    kind="flag",
                    key="k",
                    version=1,
                    item=None,
                    at=T0,
                )
        finally:
            store.close()

    with ThreadPoolExecutor(starters) as pool:
        seqs = sorted(pool.map(start, range(starters)))
    assert seqs == [1, 2, 3, 4]


@pytest.mark.service
def test_a_store_opened_before_its_database_exists_migrates_on_first_use(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()
    postgres_server.drop_database(url)
    store = SqlStore(url, connect_later=True)
    try:
        with pytest.raises(StoreUnavailable):
            store.ping()
        postgres_server.create_database(url)
        with store.unit_of_work() as uow:
            assert uow.changes.latest_seq() == 0
    finally:
        store.close()


def test_upgrading_a_database_with_data_keeps_it(sql_url: str) -> None:
    engine = create_store_engine(sql_url)
    try:
        upgrade(engine, "0001")
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO audit (id, at_ms, actor, kind, resource, action) "
                "VALUES ('old', 1000, 'a', 'flag', 'proj/p', 'createFlag')"
            )
    finally:
        engine.dispose()
    store = SqlStore(sql_url)
    try:
        with store.unit_of_work() as uow:
            uow.audit.append(
                AuditEntry(
                    id="new",
                    at=datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC),
                    actor="a",
                    kind="flag",
                    resource="proj/p",
                    action="updateOn",
                )
            )
        with store.unit_of_work(read_only=True) as uow:
            assert [e.id for e in uow.audit.list()] == ["new", "old"]
    finally:
        store.close()


def test_upgrading_to_epochs_puts_existing_changes_in_epoch_one(sql_url: str) -> None:
    engine = create_store_engine(sql_url)
    try:
        upgrade(engine, "0003")
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO changes (seq, project, environment, kind, key, version, item, at_ms)"
                " VALUES (1, 'p', 'e', 'flag', 'f', 1, NULL, 1000)"
            )
            connection.exec_driver_sql("UPDATE change_counter SET seq = 1")
    finally:
        engine.dispose()
    store = SqlStore(sql_url)
    try:
        with store.unit_of_work() as uow:
            seq = uow.changes.append(
                project="p", environment="e", kind="flag", key="g", version=1, item=None, at=T0
            )
        with store.unit_of_work(read_only=True) as uow:
            assert [(c.seq, c.epoch) for c in uow.changes.since(0)] == [(1, 1), (2, 1)]
            (first,) = uow.epochs.list()
    finally:
        store.close()
    assert seq == 2
    assert (first.epoch, first.started_after_seq, first.reason) == (1, 0, "initial")
    assert (first.timeline is None) == (store.dialect == "sqlite")


def test_upgrading_to_members_gives_accounts_their_base_role_and_one_owner(sql_url: str) -> None:
    engine = create_store_engine(sql_url)
    try:
        upgrade(engine, "0014")
        with engine.begin() as connection:
            for account, role, created in (
                ("w", "writer", 1),
                ("a", "admin", 2),
                ("b", "admin", 3),
            ):
                connection.exec_driver_sql(
                    "INSERT INTO accounts (id, email, role, password_hash, created_ms, doc)"
                    f" VALUES ('{account}', '{account}@x.y', '{role}', 'h', {created}, '{{}}')"
                )
    finally:
        engine.dispose()
    store = SqlStore(sql_url)
    try:
        with store.unit_of_work(read_only=True) as uow:
            found = {
                a.id: (a.role, a.doc["baseRole"], a.doc["customRoles"]) for a in uow.accounts.list()
            }
    finally:
        store.close()
    assert found == {
        "w": ("writer", "writer", []),
        "a": ("admin", "owner", []),
        "b": ("admin", "admin", []),
    }
