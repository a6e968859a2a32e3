"""The SQL store's replication port: what PostgreSQL says about its role (primary or hot
standby), timeline, lag and standbys, promotion with pg_promote, and the record of which region
holds the primary. SQLite is "embedded". Reads only PostgreSQL's own views and functions, plus
the `region_primary` row; driver failures leave as `StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, func, text

from flagstaff_server.adapters.millis import to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.engine import UNAVAILABLE, describe_unavailable
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.services.ports import DatabaseState, Replication, StandbyState

T = TypeVar("T")

READ_ONLY_SQLSTATE = "25006"
"""PostgreSQL's "cannot execute ... in a read-only transaction": what a hot standby answers to
any write (psycopg's `ReadOnlySqlTransaction`)."""


def is_read_only_refusal(exc: BaseException) -> bool:
    """Whether a driver error is a standby refusing a write."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) == READ_ONLY_SQLSTATE


def is_standby(connection: Connection) -> bool:
    if connection.dialect.name != "postgresql":
        return False
    return bool(connection.execute(text("SELECT pg_is_in_recovery()")).scalar())


# A standby: where replay is, whether the receiver streams and from where. Lag is 0 while it
# streams and has replayed all it received (an idle primary writes no commits, so the age of the
# last replayed one would grow for nothing), else the age of the newest commit replayed.
_STANDBY_SQL = text(
    """
    SELECT
      (SELECT status = 'streaming' FROM pg_stat_wal_receiver) AS receiving,
      (SELECT sender_host || ':' || sender_port FROM pg_stat_wal_receiver) AS upstream,
      (SELECT received_tli FROM pg_stat_wal_receiver) AS received_tli,
      (SELECT timeline_id FROM pg_control_checkpoint()) AS checkpoint_tli,
      pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() AS caught_up,
      EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) AS commit_age
    """
)
_PRIMARY_SQL = text("SELECT pg_walfile_name(pg_current_wal_lsn())")
_STANDBYS_SQL = text(
    """
    SELECT application_name, host(client_addr), state,
           EXTRACT(EPOCH FROM replay_lag),
           pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)
    FROM pg_stat_replication ORDER BY application_name
    """
)


class SqlReplication:
    """Replication of the database behind `engine` (the store's own, or one `flagstaff dr`
    opens; it needs no migrated schema, and without a `region_primary` table it reports none)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @property
    def postgres(self) -> bool:
        return self._engine.dialect.name == "postgresql"

    def state(self) -> DatabaseState:
        return self._translated(self._read_state)

    def _read_state(self) -> DatabaseState:
        with self._engine.connect() as connection:
            if not self.postgres:
                region, epoch = _primary_region(connection), current_epoch(connection)
                connection.rollback()
                return DatabaseState(role="embedded", epoch=epoch, primary_region=region)
            connection.execution_options(isolation_level="AUTOCOMMIT")
            region = _primary_region(connection)
            epoch = current_epoch(connection)
            if is_standby(connection):
                row = connection.execute(_STANDBY_SQL).one()
                receiving = bool(row.receiving)
                lag = 0.0 if receiving and row.caught_up else _seconds(row.commit_age)
                return DatabaseState(
                    role="standby",
                    timeline=int(row.received_tli or row.checkpoint_tli),
                    replication_lag_seconds=lag,
                    upstream=row.upstream,
                    receiving=receiving,
                    epoch=epoch,
                    primary_region=region,
                )
            walfile = str(connection.execute(_PRIMARY_SQL).scalar())
            standbys = tuple(
                StandbyState(
                    name=name,
                    address=address,
                    state=state,
                    replay_lag_seconds=_seconds(lag),
                    lag_bytes=None if behind is None else int(behind),
                )
                for name, address, state, lag, behind in connection.execute(_STANDBYS_SQL)
            )
            return DatabaseState(
                role="primary",
                # the WAL file name starts with the timeline, in 8 hex digits
                timeline=int(walfile[:8], 16),
                standbys=standbys,
                epoch=epoch,
                primary_region=region,
            )

    def promote(self, wait_seconds: float) -> bool:
        def run() -> bool:
            with self._engine.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT")
                done = connection.execute(
                    text("SELECT pg_promote(wait => true, wait_seconds => :seconds)"),
                    {"seconds": max(1, round(wait_seconds))},
                ).scalar()
                return bool(done)

        return self._translated(run)

    def record_primary_region(self, region: str, *, timeline: int | None, at: datetime) -> None:
        def run() -> None:
            table = schema.region_primary
            with self._engine.begin() as connection:
                connection.execute(table.delete())
                connection.execute(
                    table.insert().values(
                        id=1, region=region, timeline=timeline, at_ms=to_millis(at)
                    )
                )

        self._translated(run)

    def _translated(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except UNAVAILABLE as exc:
            raise StoreUnavailable(describe_unavailable(self._engine, exc)) from exc


def _seconds(value: Any) -> float | None:
    return None if value is None else round(max(0.0, float(value)), 3)


def _has_table(connection: Connection, name: str) -> bool:
    if connection.dialect.name == "postgresql":
        found = connection.execute(text("SELECT to_regclass(:name)"), {"name": name}).scalar()
    else:
        found = connection.execute(
            text("SELECT name FROM sqlite_master WHERE type = 'table' AND name = :name"),
            {"name": name},
        ).scalar()
    return found is not None


def _primary_region(connection: Connection) -> str | None:
    if not _has_table(connection, schema.region_primary.name):
        return None  # a database Flagstaff has not migrated (yet)
    region = connection.execute(
        schema.region_primary.select().with_only_columns(schema.region_primary.c.region)
    ).scalar()
    return None if region is None else str(region)


def current_epoch(connection: Connection) -> int:
    """The database's current epoch: the newest in `epochs` (an empty table, or a database not
    migrated that far, is epoch 1)."""
    if not _has_table(connection, schema.epochs.name):
        return 1
    found = connection.execute(
        schema.epochs.select().with_only_columns(func.max(schema.epochs.c.epoch))
    ).scalar()
    return 1 if found is None else int(found)


if TYPE_CHECKING:
    _conforms: type[Replication] = SqlReplication
