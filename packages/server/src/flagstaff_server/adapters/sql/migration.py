"""Brings a database to the newest schema with Alembic, safely when several processes start at
once: the whole upgrade runs in one transaction behind a database-wide lock."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, text

VERSION_TABLE = "flagstaff_schema_version"
SCRIPT_LOCATION = Path(__file__).with_name("migrations")
# An arbitrary constant naming Flagstaff's advisory lock on PostgreSQL.
_MIGRATION_LOCK_ID = 0x466C6167


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every missing migration up to `revision`; a no-op on an up-to-date database."""
    upgrade_chain(engine, SCRIPT_LOCATION, _MIGRATION_LOCK_ID, revision)


def upgrade_chain(engine: Engine, script_location: Path, lock_id: int, revision: str) -> None:
    """Run the Alembic chain at `script_location` up to `revision` in one transaction, behind
    the database-wide lock `lock_id` (its version table is named in the chain's env.py)."""
    with engine.begin() as connection:
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
