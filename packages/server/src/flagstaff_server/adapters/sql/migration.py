"""Brings a database to the newest schema with Alembic, safely when several processes start at
once: the whole upgrade runs in one transaction behind a database-wide lock. A hot standby is
never migrated (it cannot write; the primary's migrations replicate to it): its schema is only
checked."""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text

from flagstaff_server.adapters.sql.replication import is_standby
from flagstaff_server.errors import StoreUnavailable

VERSION_TABLE = "flagstaff_schema_version"
SCRIPT_LOCATION = Path(__file__).with_name("migrations")
# An arbitrary constant naming Flagstaff's advisory lock on PostgreSQL.
_MIGRATION_LOCK_ID = 0x466C6167
# Alembic's `op` and `context` are module-wide proxies, set for one run at a time: two upgrades in
# one process (two in-process servers, or a store and an analytics store opened at once) must not
# overlap, or one finds the other's proxy gone. Taken before any database lock, never inside one.
_ALEMBIC_PROXIES = threading.Lock()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every missing migration up to `revision`; a no-op on an up-to-date database. On a
    hot standby, apply nothing and raise `StoreUnavailable` unless its schema is the newest."""
    with engine.connect() as connection:
        standby = is_standby(connection)
        current = _current_revision(connection) if standby else None
        connection.rollback()
    if not standby:
        upgrade_chain(engine, SCRIPT_LOCATION, _MIGRATION_LOCK_ID, revision, VERSION_TABLE)
        return
    head = chain_head(SCRIPT_LOCATION)
    if current != head:
        raise StoreUnavailable(
            f"the database is a standby with schema {current or 'none'}, and this Flagstaff "
            f"needs {head}: upgrade Flagstaff in the primary region first (its migrations "
            "replicate), or promote this standby"
        )


def _current_revision(connection: Connection, version_table: str = VERSION_TABLE) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": version_table})
    return context.get_current_revision()


@cache
def chain_head(script_location: Path) -> str | None:
    """The newest revision of the chain at `script_location`, read once per process: its files
    do not change while a process runs, and reading them is most of a no-op upgrade's cost."""
    config = Config()
    config.set_main_option("script_location", str(script_location))
    return ScriptDirectory.from_config(config).get_current_head()


def upgrade_chain(
    engine: Engine, script_location: Path, lock_id: int, revision: str, version_table: str
) -> None:
    """Run the Alembic chain at `script_location` up to `revision` in one transaction, behind
    the database-wide lock `lock_id` (`version_table` is the one named in the chain's env.py).
    A database already at the head is only read: nothing to run, so no lock and no Alembic."""
    if revision == "head":
        with engine.connect() as connection:
            current = _current_revision(connection, version_table)
            connection.rollback()
        if current is not None and current == chain_head(script_location):
            return
    with _ALEMBIC_PROXIES, engine.begin() as connection:
        _lock(connection, lock_id)
        config = Config()
        config.set_main_option("script_location", str(script_location))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def _lock(connection: Connection, lock_id: int) -> None:
    # SQLite: the write transaction (BEGIN IMMEDIATE, see store.py) already excludes other
    # writers. PostgreSQL: DDL does not lock out a second migrator, the advisory lock does.
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": lock_id})
