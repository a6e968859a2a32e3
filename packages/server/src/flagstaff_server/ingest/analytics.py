"""The analytics store (SQLite or PostgreSQL through SQLAlchemy Core): processed payload ids,
hourly evaluation counts, flag activity, custom events, raw payloads, contexts, SDK instances and
the quarantine's table (its operations: `ingest.quarantine`). A batch's increments, its payload
ids and the journal position are committed in ONE transaction, which is what makes processing
idempotent. Queries for the insights API live here; no HTTP.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    and_,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError

from flagstaff_server.adapters.sql.engine import create_store_engine
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest import migration
from flagstaff_server.ingest.flag_status import Activity
from flagstaff_server.ingest.fleet import StreamState, fold_inits
from flagstaff_server.ingest.record import Record
from flagstaff_server.ingest.tally import (
    CONTEXT_KEY_CHARS,
    KEY_CHARS,
    NAME_CHARS,
    BodyRow,
    CustomRow,
    InstanceReport,
    Tally,
    created_of,
    load_payload,
    tally,
)

metadata = MetaData()

positions = Table(
    "ingest_positions",
    metadata,
    Column("node", String(64), primary_key=True),
    Column("seq", BigInteger, nullable=False),
)
payloads = Table(
    "ingest_payloads",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("payload_id", String(255), primary_key=True),
    Column("processed_ms", BigInteger, nullable=False, index=True),
)
evaluations = Table(
    "ingest_evaluations",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("flag_key", String(KEY_CHARS), primary_key=True),
    Column("hour_ms", BigInteger, primary_key=True),
    Column("variation", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
)
activity = Table(
    "ingest_flag_activity",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("flag_key", String(KEY_CHARS), primary_key=True),
    Column("first_ms", BigInteger, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
)
customs = Table(
    "ingest_custom_events",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("project", String(KEY_CHARS), nullable=False),
    Column("environment", String(KEY_CHARS), nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("key", String(KEY_CHARS), nullable=False),
    Column("context_key", String(CONTEXT_KEY_CHARS), nullable=False),
    Column("metric_value", Float, nullable=True),
    Index("ingest_custom_events_by_key", "project", "environment", "key", "created_ms"),
)
raw = Table(
    "ingest_raw_payloads",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("project", String(KEY_CHARS), nullable=False),
    Column("environment", String(KEY_CHARS), nullable=False),
    Column("first_ms", BigInteger, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Index("ingest_raw_payloads_by_time", "project", "environment", "last_ms"),
)
contexts = Table(
    "ingest_contexts",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("kind", String(NAME_CHARS), primary_key=True),
    Column("key", String(CONTEXT_KEY_CHARS), primary_key=True),
    Column("last_ms", BigInteger, nullable=False),
    Column("context", Text, nullable=False),
    Index("ingest_contexts_by_time", "project", "environment", "last_ms"),
)
instances = Table(
    "ingest_sdk_instances",
    metadata,
    Column("project", String(KEY_CHARS), primary_key=True),
    Column("environment", String(KEY_CHARS), primary_key=True),
    Column("instance_id", String(NAME_CHARS), primary_key=True),
    Column("sdk_name", String(NAME_CHARS), nullable=True),
    Column("sdk_version", String(NAME_CHARS), nullable=True),
    Column("wrapper", String(NAME_CHARS), nullable=True),
    Column("streaming", Boolean, nullable=True),
    Column("platform", Text, nullable=True),
    Column("first_ms", BigInteger, nullable=False),
    Column("last_ms", BigInteger, nullable=False),
    Column("dropped_events", BigInteger, nullable=False),
    Column("data_since_ms", BigInteger, nullable=True),
    Column("stream_init_ms", BigInteger, nullable=True),
    Column("stream_ok", Boolean, nullable=True),
    Column("stream_ok_ms", BigInteger, nullable=True),
    Column("diagnostic_interval_ms", BigInteger, nullable=True),
    Column("stream_failed_ms", BigInteger, nullable=True),
    Column("reported_state", String(32), nullable=True),
    Column("reported_since_ms", BigInteger, nullable=True),
    Column("reported_age_ms", BigInteger, nullable=True),
    Column("reported_source", String(32), nullable=True),
    Column("reported_ms", BigInteger, nullable=True),
    Column("stopped_ms", BigInteger, nullable=True),
)
quarantined = Table(
    "ingest_quarantine",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("project", String(KEY_CHARS), nullable=False),
    Column("environment", String(KEY_CHARS), nullable=False),
    Column("payload_id", String(255), nullable=False),
    Column("kind", Integer, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("received_ms", BigInteger, nullable=False),
    Column("quarantined_ms", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Index("ingest_quarantine_by_payload", "project", "environment", "payload_id", unique=True),
)

CLAIM_ROWS = 500
"""Payload ids claimed per statement (one multi-row insert each)."""

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
    chain; the tables above must match its newest revision); while the database is unreachable
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

    def _run(self, work: Any) -> Any:
        """`work(connection)` in one transaction. A driver error is the store unavailable, unless
        it comes from the data (`PAYLOAD_ERRORS`): that one propagates as it is."""
        try:
            with self._begin() as connection:
                return work(connection)
        except PAYLOAD_ERRORS:
            raise
        except (OperationalError, DBAPIError) as exc:
            raise StoreUnavailable(f"analytics store unavailable: {exc.orig}") from exc

    def run(self, work: Callable[[Connection], Any]) -> Any:
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

        result: int = self._run(work)
        return result

    def commit(self, node: str | None, records: Sequence[Record], *, now_ms: int) -> Committed:
        """Add a batch: skip payloads already processed, add the rest, record their ids and (for a
        local journal) the node's position, all in one transaction."""

        def work(connection: Connection) -> Committed:
            return self.commit_in(connection, node, records, now_ms=now_ms)

        result: Committed = self._run(work)
        return result

    def commit_in(
        self, connection: Connection, node: str | None, records: Sequence[Record], *, now_ms: int
    ) -> Committed:
        """`commit`'s work inside a transaction the caller holds."""
        fresh = self._claim(connection, records, now_ms)
        if fresh:
            self._add(connection, self.tally(fresh), now_ms)
        if node is not None and records:
            self.move(connection, node, records[-1].seq)
        return Committed(payloads=len(fresh), duplicates=len(records) - len(fresh))

    def forget_payloads(self, before_ms: int) -> int:
        """Drop processed ids older than the retention window."""

        def work(connection: Connection) -> int:
            return connection.execute(
                delete(payloads).where(payloads.c.processed_ms < before_ms)
            ).rowcount

        result: int = self._run(work)
        return result

    def _claim(
        self, connection: Connection, records: Sequence[Record], now_ms: int
    ) -> list[Record]:
        """The records whose payload id this transaction is the first to record, in order.

        The claim is the insert itself (`ON CONFLICT DO NOTHING ... RETURNING`), not a read
        before it: when another node's transaction holds the same id uncommitted (a batch
        accepted in region B and retried to region A, both processors busy), PostgreSQL makes
        this insert wait for it and then skips the row if it committed, so exactly one of them
        counts the payload and the other sees a duplicate. A read first let both see the id
        missing; the second insert then failed the batch as if its data were bad."""
        candidates: dict[tuple[str, str, str], Record] = {}
        for r in records:
            candidates.setdefault((r.project, r.environment, r.payload_id), r)
        keys = list(candidates)
        claimed: set[tuple[str, str, str]] = set()
        for start in range(0, len(keys), CLAIM_ROWS):
            statement = (
                self.upsert(payloads)
                .on_conflict_do_nothing(index_elements=["project", "environment", "payload_id"])
                .returning(payloads.c.project, payloads.c.environment, payloads.c.payload_id)
            )
            rows = connection.execute(
                statement,
                [
                    {"project": p, "environment": e, "payload_id": i, "processed_ms": now_ms}
                    for p, e, i in keys[start : start + CLAIM_ROWS]
                ],
            )
            claimed.update((p, e, i) for p, e, i in rows)
        return [r for key, r in candidates.items() if key in claimed]

    def move(self, connection: Connection, node: str, seq: int) -> None:
        """Set a node's committed journal position (inside the caller's transaction)."""
        updated = connection.execute(
            update(positions).where(positions.c.node == node).values(seq=seq)
        ).rowcount
        if not updated:
            connection.execute(insert(positions).values(node=node, seq=seq))

    def _insert_many(
        self,
        connection: Connection,
        table: Table,
        columns: Sequence[str],
        rows: Sequence[tuple[Any, ...]],
    ) -> None:
        """Plain inserts of many rows through the driver's `executemany`: the rows of a busy
        batch (custom events, bodies, payload ids) skip SQLAlchemy's per-row parameter
        processing."""
        quote = connection.dialect.identifier_preparer.quote
        mark = "?" if self.dialect == "sqlite" else "%s"
        names = ", ".join(quote(column) for column in columns)
        marks = ", ".join(mark for _ in columns)
        sql = f"INSERT INTO {quote(table.name)} ({names}) VALUES ({marks})"
        connection.exec_driver_sql(sql, rows)

    def upsert(self, table: Table) -> Any:
        """An INSERT that takes `on_conflict_do_update` / `_do_nothing` in this dialect."""
        module: Any = postgresql if self.dialect == "postgresql" else sqlite
        return module.insert(table)

    def _add(self, connection: Connection, batch: Tally, now_ms: int) -> None:
        if batch.counts:
            statement = self.upsert(evaluations)
            statement = statement.on_conflict_do_update(
                index_elements=["project", "environment", "flag_key", "hour_ms", "variation"],
                set_={"count": evaluations.c.count + statement.excluded.count},
            )
            connection.execute(
                statement,
                [
                    {
                        "project": p,
                        "environment": e,
                        "flag_key": f,
                        "hour_ms": h,
                        "variation": v,
                        "count": n,
                    }
                    for (p, e, f, h, v), n in batch.counts.items()
                ],
            )
        if batch.activity:
            statement = self.upsert(activity)
            statement = statement.on_conflict_do_update(
                index_elements=["project", "environment", "flag_key"],
                set_={
                    "first_ms": func.min(activity.c.first_ms, statement.excluded.first_ms)
                    if self.dialect == "sqlite"
                    else func.least(activity.c.first_ms, statement.excluded.first_ms),
                    "last_ms": func.max(activity.c.last_ms, statement.excluded.last_ms)
                    if self.dialect == "sqlite"
                    else func.greatest(activity.c.last_ms, statement.excluded.last_ms),
                },
            )
            connection.execute(
                statement,
                [
                    {"project": p, "environment": e, "flag_key": f, "first_ms": a, "last_ms": b}
                    for (p, e, f), (a, b) in batch.activity.items()
                ],
            )
        if batch.customs:
            self._insert_many(connection, customs, CustomRow._fields, batch.customs)
        if batch.bodies:
            self._insert_many(connection, raw, BodyRow._fields, batch.bodies)
        if batch.contexts:
            statement = self.upsert(contexts)
            statement = statement.on_conflict_do_update(
                index_elements=["project", "environment", "kind", "key"],
                set_={"last_ms": statement.excluded.last_ms, "context": statement.excluded.context},
            )
            connection.execute(
                statement,
                [
                    {
                        "project": p,
                        "environment": e,
                        "kind": k,
                        "key": key,
                        "last_ms": at,
                        "context": orjson.dumps(body).decode(),
                    }
                    for (p, e, k, key), (at, body) in batch.contexts.items()
                ],
            )
            for project, environment in {(p, e) for (p, e, _, _) in batch.contexts}:
                self._bound_contexts(connection, project, environment)
        for key, report in batch.instances.items():
            self._merge_instance(connection, key, report)

    def _bound_contexts(self, connection: Connection, project: str, environment: str) -> None:
        """Keep the `context_limit` most recently seen contexts of an environment."""
        scope = and_(contexts.c.project == project, contexts.c.environment == environment)
        cutoff = connection.execute(
            select(contexts.c.last_ms)
            .where(scope)
            .order_by(contexts.c.last_ms.desc())
            .offset(self.context_limit)
            .limit(1)
        ).scalar()
        if cutoff is not None:
            connection.execute(delete(contexts).where(scope, contexts.c.last_ms <= cutoff))

    def _merge_instance(
        self, connection: Connection, key: tuple[str, str, str], report: InstanceReport
    ) -> None:
        project, environment, instance_id = key
        where = and_(
            instances.c.project == project,
            instances.c.environment == environment,
            instances.c.instance_id == instance_id,
        )
        # The row is made first (nothing if it exists) and read locked, so two nodes merging
        # reports of one instance at once (its SDK failed over between regions) take turns:
        # each adds its report to what the other committed. Reading first let both find no row
        # and the second insert fail; or both update from the same row, one report lost.
        connection.execute(
            self.upsert(instances)
            .values(
                project=project,
                environment=environment,
                instance_id=instance_id,
                first_ms=report.first_ms,
                last_ms=report.last_ms,
                dropped_events=0,
            )
            .on_conflict_do_nothing(index_elements=["project", "environment", "instance_id"])
        )
        row = connection.execute(select(instances).where(where).with_for_update()).mappings().one()
        values: dict[str, Any] = {
            name: getattr(report, name)
            for name in (
                "sdk_name",
                "sdk_version",
                "wrapper",
                "streaming",
                "data_since_ms",
                "diagnostic_interval_ms",
            )
            if getattr(report, name) is not None
        }
        if report.platform is not None:
            values["platform"] = orjson.dumps(report.platform).decode()
        if report.reported_ms is not None and (
            row["reported_ms"] is None or report.reported_ms >= row["reported_ms"]
        ):
            values.update(
                reported_state=report.reported_state,
                reported_since_ms=report.reported_since_ms,
                reported_age_ms=report.reported_age_ms,
                reported_source=report.reported_source,
                reported_ms=report.reported_ms,
                stopped_ms=report.stopped_ms,
            )
        known = StreamState(
            init_ms=row["stream_init_ms"],
            ok=row["stream_ok"],
            ok_ms=row["stream_ok_ms"],
            failed_ms=row["stream_failed_ms"],
        )
        stream = fold_inits(known, report.inits)
        values.update(
            stream_init_ms=stream.init_ms,
            stream_ok=stream.ok,
            stream_ok_ms=stream.ok_ms,
            stream_failed_ms=stream.failed_ms,
        )
        values["last_ms"] = max(row["last_ms"], report.last_ms)
        values["first_ms"] = min(row["first_ms"], report.first_ms)
        values["dropped_events"] = row["dropped_events"] + report.dropped_events
        connection.execute(update(instances).where(where).values(**values))

    # queries -----------------------------------------------------------------------------------

    def evaluation_series(
        self, project: str, environment: str, flag_key: str, *, start_ms: int, end_ms: int
    ) -> list[tuple[int, int, int]]:
        """(hour start ms, variation, count), ordered by hour then variation."""

        def work(connection: Connection) -> list[tuple[int, int, int]]:
            rows = connection.execute(
                select(evaluations.c.hour_ms, evaluations.c.variation, evaluations.c.count)
                .where(
                    evaluations.c.project == project,
                    evaluations.c.environment == environment,
                    evaluations.c.flag_key == flag_key,
                    evaluations.c.hour_ms >= start_ms - start_ms % 3_600_000,
                    evaluations.c.hour_ms < end_ms,
                )
                .order_by(evaluations.c.hour_ms, evaluations.c.variation)
            )
            return [(int(h), int(v), int(n)) for h, v, n in rows]

        result: list[tuple[int, int, int]] = self._run(work)
        return result

    def flag_activity(
        self, project: str, environment: str, *, recent_ms: int, long_ms: int
    ) -> dict[str, Activity]:
        """Per evaluated flag: first/last evaluation and the variations served in the hours
        from `recent_ms` and from `long_ms`."""

        def work(connection: Connection) -> dict[str, Activity]:
            times = {
                flag_key: (int(first), int(last))
                for flag_key, first, last in connection.execute(
                    select(activity.c.flag_key, activity.c.first_ms, activity.c.last_ms).where(
                        activity.c.project == project, activity.c.environment == environment
                    )
                )
            }
            recent: dict[str, set[int]] = {}
            long: dict[str, set[int]] = {}
            for flag_key, hour, variation in connection.execute(
                select(evaluations.c.flag_key, evaluations.c.hour_ms, evaluations.c.variation)
                .where(
                    evaluations.c.project == project,
                    evaluations.c.environment == environment,
                    evaluations.c.hour_ms >= long_ms - long_ms % 3_600_000,
                )
                .distinct()
            ):
                long.setdefault(flag_key, set()).add(int(variation))
                if hour >= recent_ms - recent_ms % 3_600_000:
                    recent.setdefault(flag_key, set()).add(int(variation))
            return {
                key: Activity(
                    first_ms=first,
                    last_ms=last,
                    recent_variations=frozenset(recent.get(key, ())),
                    long_variations=frozenset(long.get(key, ())),
                )
                for key, (first, last) in times.items()
            }

        result: dict[str, Activity] = self._run(work)
        return result

    def sdk_instances(self, project: str, environment: str) -> list[dict[str, Any]]:
        def work(connection: Connection) -> list[dict[str, Any]]:
            rows = connection.execute(
                select(instances)
                .where(instances.c.project == project, instances.c.environment == environment)
                .order_by(instances.c.last_ms.desc())
            ).mappings()
            return [dict(row) for row in rows]

        result: list[dict[str, Any]] = self._run(work)
        return result

    def metric(self, project: str, environment: str, key: str) -> tuple[int, int, float]:
        """Custom events named `key`: (events, events with a metric value, sum of the values)."""

        def work(connection: Connection) -> tuple[int, int, float]:
            row = connection.execute(
                select(
                    func.count(),
                    func.count(customs.c.metric_value),
                    func.sum(customs.c.metric_value),
                ).where(
                    customs.c.project == project,
                    customs.c.environment == environment,
                    customs.c.key == key,
                )
            ).one()
            return int(row[0]), int(row[1]), float(row[2] or 0.0)

        result: tuple[int, int, float] = self._run(work)
        return result

    def recent_contexts(
        self, project: str, environment: str, *, limit: int
    ) -> list[tuple[int, dict[str, Any]]]:
        """The most recently seen contexts, newest first: (last seen ms, context)."""

        def work(connection: Connection) -> list[tuple[int, dict[str, Any]]]:
            rows = connection.execute(
                select(contexts.c.last_ms, contexts.c.context)
                .where(contexts.c.project == project, contexts.c.environment == environment)
                .order_by(contexts.c.last_ms.desc(), contexts.c.kind, contexts.c.key)
                .limit(limit)
            )
            return [(int(at), orjson.loads(body)) for at, body in rows]

        result: list[tuple[int, dict[str, Any]]] = self._run(work)
        return result

    def context_count(self, project: str, environment: str) -> int:
        def work(connection: Connection) -> int:
            return int(
                connection.execute(
                    select(func.count()).where(
                        contexts.c.project == project, contexts.c.environment == environment
                    )
                ).scalar()
                or 0
            )

        result: int = self._run(work)
        return result

    def export(
        self, project: str, environment: str, *, start_ms: int, end_ms: int, page: int = 200
    ) -> Iterator[bytes]:
        """Raw events created in [start, end) as JSON lines, payload by payload in processing
        order (a summary counts at its `endDate`)."""
        after_id = 0
        while True:

            def work(connection: Connection, after: int = after_id) -> list[tuple[int, bytes]]:
                rows = connection.execute(
                    select(raw.c.id, raw.c.body)
                    .where(
                        raw.c.project == project,
                        raw.c.environment == environment,
                        raw.c.last_ms >= start_ms,
                        raw.c.first_ms < end_ms,
                        raw.c.id > after,
                    )
                    .order_by(raw.c.id)
                    .limit(page)
                )
                return [(int(i), bytes(b)) for i, b in rows]

            rows: list[tuple[int, bytes]] = self._run(work)
            for _, body in rows:
                parsed = load_payload(body)
                for event in parsed if isinstance(parsed, list) else [parsed]:
                    if isinstance(event, dict) and start_ms <= created_of(event, start_ms) < end_ms:
                        yield orjson.dumps(event) + b"\n"
            if len(rows) < page:
                return
            after_id = rows[-1][0]
