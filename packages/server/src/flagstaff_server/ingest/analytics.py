"""The analytics store (SQLite or PostgreSQL through SQLAlchemy Core): processed payload ids,
hourly evaluation counts, flag activity, custom events, raw payloads, contexts, SDK instances and
the quarantine's table (its operations: `ingest.quarantine`). A batch's increments, its payload
ids and the journal position are committed in ONE transaction, which is what makes processing
idempotent. This module owns opening, migrating and the transaction with its error translation;
the tables are `analytics_tables`, a batch's writes `analytics_batch`, the reads of the insights
API `analytics_queries`. No HTTP.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection, Table, delete, select
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError

from flagstaff_server.adapters.sql.engine import create_store_engine
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest import analytics_batch, analytics_queries, migration
from flagstaff_server.ingest.analytics_tables import payloads, positions
from flagstaff_server.ingest.flag_status import Activity
from flagstaff_server.ingest.record import Record
from flagstaff_server.ingest.tally import Tally, tally

T = TypeVar("T")

PAYLOAD_ERRORS = (DataError, IntegrityError)
"""Driver errors that come from the data written, not from the database's health: a value its
column cannot hold (`tally` bounds every text it takes, so this would be a bug), a constraint.
They fail the batch that holds the payload (which processing then bisects), never count as the
store down."""


@dataclass(frozen=True, slots=True)
class Committed:
    payloads: int
    duplicates: int


class AnalyticsStore:
    """Opened lazily: the first use migrates the schema (`ingest.migration`, its own Alembic
    chain; `analytics_tables` must match its newest revision); while the database is unreachable
    every call raises `StoreUnavailable` and ingestion keeps acknowledging into the journal."""

    def __init__(
        self,
        url: str,
        *,
        context_limit: int = 10_000,
        tally: Callable[[Iterable[Record]], Tally] = tally,
    ) -> None:
        self.url = url
        self.context_limit = context_limit
        self.tally = tally
        """The processing math applied to each batch (a seam: tests hand in one that fails)."""
        self.engine = create_store_engine(url)
        self.dialect = self.engine.dialect.name
        self._ready = False
        self._lock = threading.Lock()

    def close(self) -> None:
        self.engine.dispose()

    def _begin(self) -> Any:
        try:
            if not self._ready:
                with self._lock:
                    if not self._ready:
                        migration.upgrade(self.engine)
                        self._ready = True
            return self.engine.begin()
        except (OperationalError, DBAPIError) as exc:
            raise StoreUnavailable(f"analytics store unavailable: {exc.orig}") from exc

    def _run(self, work: Callable[[Connection], T]) -> T:
        """`work(connection)` in one transaction. A driver error is the store unavailable, unless
        it comes from the data (`PAYLOAD_ERRORS`): that one propagates as it is."""
        try:
            with self._begin() as connection:
                return work(connection)
        except PAYLOAD_ERRORS:
            raise
        except (OperationalError, DBAPIError) as exc:
            raise StoreUnavailable(f"analytics store unavailable: {exc.orig}") from exc

    def run(self, work: Callable[[Connection], T]) -> T:
        """`work(connection)` in one transaction, with the store's error translation (for
        `ingest.quarantine`, which keeps its own statements)."""
        return self._run(work)

    # processing --------------------------------------------------------------------------------

    def position(self, node: str) -> int:
        def work(connection: Connection) -> int:
            found = connection.execute(
                select(positions.c.seq).where(positions.c.node == node)
            ).scalar()
            return int(found or 0)

        return self._run(work)

    def commit(self, node: str | None, records: Sequence[Record], *, now_ms: int) -> Committed:
        """Add a batch: skip payloads already processed, add the rest, record their ids and (for a
        local journal) the node's position, all in one transaction."""
        return self._run(lambda c: self.commit_in(c, node, records, now_ms=now_ms))

    def commit_in(
        self, connection: Connection, node: str | None, records: Sequence[Record], *, now_ms: int
    ) -> Committed:
        """`commit`'s work inside a transaction the caller holds."""
        fresh = analytics_batch.claim(connection, records, now_ms)
        if fresh:
            analytics_batch.add_tally(
                connection, self.tally(fresh), context_limit=self.context_limit
            )
        if node is not None and records:
            self.move(connection, node, records[-1].seq)
        return Committed(payloads=len(fresh), duplicates=len(records) - len(fresh))

    def forget_payloads(self, before_ms: int) -> int:
        """Drop processed ids older than the retention window."""

        def work(connection: Connection) -> int:
            return connection.execute(
                delete(payloads).where(payloads.c.processed_ms < before_ms)
            ).rowcount

        return self._run(work)

    def move(self, connection: Connection, node: str, seq: int) -> None:
        """Set a node's committed journal position (inside the caller's transaction)."""
        analytics_batch.move_position(connection, node, seq)

    def upsert(self, table: Table) -> Any:
        """An INSERT that takes `on_conflict_do_update` / `_do_nothing` in this dialect."""
        return analytics_batch.upsert(self.dialect, table)

    # queries (`analytics_queries`) -------------------------------------------------------------

    def evaluation_series(
        self, project: str, environment: str, flag_key: str, *, start_ms: int, end_ms: int
    ) -> list[tuple[int, int, int]]:
        """(hour start ms, variation, count), ordered by hour then variation."""
        return self._run(
            lambda connection: analytics_queries.evaluation_series(
                connection, project, environment, flag_key, start_ms=start_ms, end_ms=end_ms
            )
        )

    def flag_activity(
        self, project: str, environment: str, *, recent_ms: int, long_ms: int
    ) -> dict[str, Activity]:
        """Per evaluated flag: first/last evaluation and the variations served in the hours
        from `recent_ms` and from `long_ms`."""
        return self._run(
            lambda connection: analytics_queries.flag_activity(
                connection, project, environment, recent_ms=recent_ms, long_ms=long_ms
            )
        )

    def sdk_instances(self, project: str, environment: str) -> list[dict[str, Any]]:
        return self._run(
            lambda connection: analytics_queries.sdk_instances(connection, project, environment)
        )

    def metric(self, project: str, environment: str, key: str) -> tuple[int, int, float]:
        """Custom events named `key`: (events, events with a metric value, sum of the values)."""
        return self._run(
            lambda connection: analytics_queries.metric(connection, project, environment, key)
        )

    def recent_contexts(
        self, project: str, environment: str, *, limit: int
    ) -> list[tuple[int, dict[str, Any]]]:
        """The most recently seen contexts, newest first: (last seen ms, context)."""
        return self._run(
            lambda connection: analytics_queries.recent_contexts(
                connection, project, environment, limit=limit
            )
        )

    def search_contexts(
        self,
        project: str,
        environment: str,
        *,
        kind: str | None,
        key_part: str | None,
        keep: Callable[[dict[str, Any]], bool],
        limit: int,
    ) -> list[tuple[int, dict[str, Any]]]:
        """The newest `limit` contexts seen of `kind` whose key holds `key_part` and that `keep`
        accepts: (last seen ms, context). Reads at most the environment's kept contexts."""

        def work(connection: Connection) -> list[tuple[int, dict[str, Any]]]:
            found: list[tuple[int, dict[str, Any]]] = []
            for at, context in analytics_queries.find_contexts(
                connection, project, environment, kind=kind, key_part=key_part
            ):
                if keep(context):
                    found.append((at, context))
                    if len(found) >= limit:
                        break
            return found

        return self._run(work)

    def seen_context(
        self, project: str, environment: str, kind: str, key: str
    ) -> tuple[int, dict[str, Any]] | None:
        return self._run(
            lambda connection: analytics_queries.seen_context(
                connection, project, environment, kind, key
            )
        )

    def newest_payloads(self, project: str, environment: str, *, limit: int) -> list[bytes]:
        return self._run(
            lambda connection: analytics_queries.newest_payloads(
                connection, project, environment, limit=limit
            )
        )

    def context_count(self, project: str, environment: str) -> int:
        return self._run(
            lambda connection: analytics_queries.context_count(connection, project, environment)
        )

    def export(
        self, project: str, environment: str, *, start_ms: int, end_ms: int, page: int = 200
    ) -> Iterator[bytes]:
        """Raw events created in [start, end) as JSON lines, payload by payload in processing
        order (a summary counts at its `endDate`); one transaction per page."""
        after_id = 0
        while True:

            def work(connection: Connection, after: int = after_id) -> list[tuple[int, bytes]]:
                return analytics_queries.raw_page(
                    connection,
                    project,
                    environment,
                    start_ms=start_ms,
                    end_ms=end_ms,
                    after=after,
                    page=page,
                )

            rows = self._run(work)
            yield from analytics_queries.event_lines(
                (body for _, body in rows), start_ms=start_ms, end_ms=end_ms
            )
            if len(rows) < page:
                return
            after_id = rows[-1][0]
