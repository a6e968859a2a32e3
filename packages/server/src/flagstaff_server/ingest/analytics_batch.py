"""Writing one processed batch into the analytics store, inside the caller's transaction:
claiming the batch's payload ids (so a payload is counted once however many nodes commit it),
the journal position, and the batch's increments (evaluation counts, flag activity, custom
events, raw bodies, contexts bounded per environment, SDK instances merged with what is known of
them). SQL only; the math of a batch is `tally`'s, the transaction the store's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import Connection, Table, and_, case, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from flagstaff_server.ingest.analytics_tables import (
    activity,
    contexts,
    customs,
    evaluations,
    exposures,
    instances,
    payloads,
    positions,
    raw,
)
from flagstaff_server.ingest.diagnostic_tally import InstanceReport
from flagstaff_server.ingest.fleet import StreamState, fold_inits
from flagstaff_server.ingest.record import Record
from flagstaff_server.ingest.tally import BodyRow, CustomRow, Tally

CLAIM_ROWS = 500
"""Payload ids claimed per statement (one multi-row insert each)."""


def claim(connection: Connection, records: Sequence[Record], now_ms: int) -> list[Record]:
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
            upsert(connection.dialect.name, payloads)
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


def move_position(connection: Connection, node: str, seq: int) -> None:
    """Set a node's committed journal position (inside the caller's transaction)."""
    updated = connection.execute(
        update(positions).where(positions.c.node == node).values(seq=seq)
    ).rowcount
    if not updated:
        connection.execute(insert(positions).values(node=node, seq=seq))


def insert_many(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
) -> None:
    """Plain inserts of many rows through the driver's `executemany`: the rows of a busy
    batch (custom events, bodies, payload ids) skip SQLAlchemy's per-row parameter
    processing."""
    quote = connection.dialect.identifier_preparer.quote
    mark = "?" if connection.dialect.name == "sqlite" else "%s"
    names = ", ".join(quote(column) for column in columns)
    marks = ", ".join(mark for _ in columns)
    sql = f"INSERT INTO {quote(table.name)} ({names}) VALUES ({marks})"
    connection.exec_driver_sql(sql, rows)


def upsert(dialect: str, table: Table) -> Any:
    """An INSERT that takes `on_conflict_do_update` / `_do_nothing` in `dialect`."""
    module: Any = postgresql if dialect == "postgresql" else sqlite
    return module.insert(table)


def add_tally(connection: Connection, batch: Tally, *, context_limit: int) -> None:
    """Add a batch's increments: counts, activity, custom events, bodies, contexts (keeping the
    `context_limit` newest per environment) and SDK instances."""
    dialect = connection.dialect.name
    if batch.counts:
        statement = upsert(dialect, evaluations)
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
        statement = upsert(dialect, activity)
        statement = statement.on_conflict_do_update(
            index_elements=["project", "environment", "flag_key"],
            set_={
                "first_ms": func.min(activity.c.first_ms, statement.excluded.first_ms)
                if dialect == "sqlite"
                else func.least(activity.c.first_ms, statement.excluded.first_ms),
                "last_ms": func.max(activity.c.last_ms, statement.excluded.last_ms)
                if dialect == "sqlite"
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
        insert_many(connection, customs, CustomRow._fields, batch.customs)
    if batch.bodies:
        insert_many(connection, raw, BodyRow._fields, batch.bodies)
    if batch.contexts:
        statement = upsert(dialect, contexts)
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
            _bound_contexts(connection, project, environment, context_limit)
    for key, report in batch.instances.items():
        _merge_instance(connection, key, report)
    if batch.exposures:
        _add_exposures(connection, batch)


def _add_exposures(connection: Connection, batch: Tally) -> None:
    """Keep each unit's earliest exposure (and its variation) per flag version."""
    dialect = connection.dialect.name
    statement = upsert(dialect, exposures)
    earlier = statement.excluded.first_ms < exposures.c.first_ms
    statement = statement.on_conflict_do_update(
        index_elements=[
            "project",
            "environment",
            "flag_key",
            "flag_version",
            "context_kind",
            "context_key",
        ],
        set_={
            "first_ms": case((earlier, statement.excluded.first_ms), else_=exposures.c.first_ms),
            "variation": case((earlier, statement.excluded.variation), else_=exposures.c.variation),
        },
    )
    connection.execute(
        statement,
        [
            {
                "project": p,
                "environment": e,
                "flag_key": f,
                "flag_version": version,
                "context_kind": kind,
                "context_key": key,
                "first_ms": first,
                "variation": variation,
            }
            for (p, e, f, version, kind, key), (first, variation) in batch.exposures.items()
        ],
    )


def _bound_contexts(
    connection: Connection, project: str, environment: str, context_limit: int
) -> None:
    """Keep the `context_limit` most recently seen contexts of an environment."""
    scope = and_(contexts.c.project == project, contexts.c.environment == environment)
    cutoff = connection.execute(
        select(contexts.c.last_ms)
        .where(scope)
        .order_by(contexts.c.last_ms.desc())
        .offset(context_limit)
        .limit(1)
    ).scalar()
    if cutoff is not None:
        connection.execute(delete(contexts).where(scope, contexts.c.last_ms <= cutoff))


def _merge_instance(
    connection: Connection, key: tuple[str, str, str], report: InstanceReport
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
        upsert(connection.dialect.name, instances)
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
