"""Brings the analytics database to its newest schema with Alembic: a chain and version table of
its own, apart from the control plane's, run in one transaction behind a database-wide lock so
that nodes starting together migrate once."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, text

VERSION_TABLE = "flagstaff_analytics_schema_version"
SCRIPT_LOCATION = Path(__file__).with_name("migrations")
# An arbitrary constant naming the analytics migration's advisory lock on PostgreSQL (not the
# control plane's: the two databases may be one).
_MIGRATION_LOCK_ID = 0x466C6169


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every missing migration up to `revision`; a no-op on an up-to-date database."""
    with engine.begin() as connection:
        _lock(connection)
        config = Config()
        config.set_main_option("script_location", str(SCRIPT_LOCATION))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def _lock(connection: Connection) -> None:
    # SQLite: the write transaction (BEGIN IMMEDIATE) already excludes other writers.
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _MIGRATION_LOCK_ID})
