"""Which history a PostgreSQL server is writing: its timeline (a new one begins at every promotion
and point-in-time recovery) and its cluster's system identifier (a new cluster, e.g. one a dump
was restored into, has another). Read-only queries; SQLite has neither and answers None."""

from __future__ import annotations

from sqlalchemy import Connection, text

from flagstaff_server.services.ports import DatabaseTimeline

# pg_walfile_name names the WAL segment after the timeline the server inserts on now (its first
# 8 hex digits), also just after a promotion, when pg_control_checkpoint() still shows the old
# timeline until the next checkpoint. It refuses to run during recovery, hence the CASE.
_IDENTITY = text(
    "SELECT pg_is_in_recovery() AS standby,"
    " CASE WHEN pg_is_in_recovery() THEN NULL"
    " ELSE pg_walfile_name(pg_current_wal_lsn()) END AS wal_file,"
    " (SELECT system_identifier::text FROM pg_control_system()) AS system_id"
)


def read_timeline(connection: Connection) -> DatabaseTimeline | None:
    """The primary's timeline and system identifier; None on SQLite and on a standby."""
    if connection.dialect.name != "postgresql":
        return None
    row = connection.execute(_IDENTITY).one()
    if row.standby or row.wal_file is None:
        return None
    return DatabaseTimeline(timeline=int(row.wal_file[:8], 16), system_id=row.system_id)
