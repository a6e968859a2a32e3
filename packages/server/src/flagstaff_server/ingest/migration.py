"""Brings the analytics database to its newest schema with Alembic: a chain and version table of
its own, apart from the control plane's, run in one transaction behind a database-wide lock so
that nodes starting together migrate once."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from flagstaff_server.adapters.sql.migration import upgrade_chain

VERSION_TABLE = "flagstaff_analytics_schema_version"
SCRIPT_LOCATION = Path(__file__).with_name("migrations")
# An arbitrary constant naming the analytics migration's advisory lock on PostgreSQL (not the
# control plane's: the two databases may be one).
_MIGRATION_LOCK_ID = 0x466C6169


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply every missing migration up to `revision`; a no-op on an up-to-date database."""
    upgrade_chain(engine, SCRIPT_LOCATION, _MIGRATION_LOCK_ID, revision, VERSION_TABLE)
