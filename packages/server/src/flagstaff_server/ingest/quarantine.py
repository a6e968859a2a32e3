"""The quarantine: payloads that failed processing on their own (after a failing batch was
bisected), kept in the analytics store with the error, so processing goes on behind them. Keeps
one (its id marked processed and the node's position past it, in one transaction), counts, lists,
exports and reprocesses them. Never decides what is poison: the processor does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
from sqlalchemy import Connection, and_, delete, func, select, update

from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.analytics_tables import payloads, quarantined
from flagstaff_server.ingest.record import Kind, Record

ERROR_CHARS = 2_000
"""How much of an error's text is kept."""
PAGE = 100
"""Payloads read per query when exporting or reprocessing."""


@dataclass(frozen=True, slots=True)
class Failure:
    payload_id: str
    error: str


@dataclass(frozen=True, slots=True)
class Reprocessed:
    reprocessed: int
    failed: list[Failure]
    remaining: int
    """Payloads of the environment still in quarantine afterwards."""


def error_text(exc: BaseException) -> str:
    """What is kept of an error: its type and message, bounded, without NUL (PostgreSQL's text
    cannot hold it)."""
    text = f"{type(exc).__name__}: {exc}".replace("\x00", "\\u0000")
    return text[:ERROR_CHARS]


def keep(
    store: AnalyticsStore, node: str | None, record: Record, *, error: str, now_ms: int
) -> bool:
    """Quarantine one payload: its bytes and `error`, its id marked processed (a repeat of it is
    skipped), and for a local journal the node's position past it, all in one transaction. False
    when it was already there (a repeat appended twice)."""

    def work(connection: Connection) -> bool:
        statement = store.upsert(quarantined).on_conflict_do_nothing(
            index_elements=["project", "environment", "payload_id"]
        )
        added = connection.execute(
            statement,
            {
                "project": record.project,
                "environment": record.environment,
                "payload_id": record.payload_id,
                "kind": int(record.kind),
                "seq": record.seq,
                "received_ms": record.received_ms,
                "quarantined_ms": now_ms,
                "attempts": 1,
                "error": error,
                "body": record.payload,
            },
        ).rowcount
        connection.execute(
            store.upsert(payloads).on_conflict_do_nothing(
                index_elements=["project", "environment", "payload_id"]
            ),
            {
                "project": record.project,
                "environment": record.environment,
                "payload_id": record.payload_id,
                "processed_ms": now_ms,
            },
        )
        if node is not None:
            store.move(connection, node, record.seq)
        return bool(added)

    result: bool = store.run(work)
    return result


def count(store: AnalyticsStore, project: str | None = None, environment: str | None = None) -> int:
    """Payloads held, in one environment or (without one) in every environment."""

    def work(connection: Connection) -> int:
        query = select(func.count()).select_from(quarantined)
        if project is not None and environment is not None:
            query = query.where(_scope(project, environment))
        return int(connection.execute(query).scalar() or 0)

    result: int = store.run(work)
    return result


def listing(
    store: AnalyticsStore, project: str, environment: str, *, limit: int
) -> list[dict[str, Any]]:
    """The oldest `limit` payloads held: when and why, without their bodies."""

    def work(connection: Connection) -> list[dict[str, Any]]:
        rows = connection.execute(
            select(
                quarantined.c.payload_id,
                quarantined.c.kind,
                quarantined.c.received_ms,
                quarantined.c.quarantined_ms,
                quarantined.c.attempts,
                quarantined.c.error,
                func.length(quarantined.c.body),
            )
            .where(_scope(project, environment))
            .order_by(quarantined.c.id)
            .limit(limit)
        )
        return [
            {
                "payloadId": payload_id,
                "kind": Kind(kind).name.lower(),
                "receivedAt": int(received),
                "quarantinedAt": int(at),
                "attempts": int(attempts),
                "error": error,
                "bytes": int(size),
            }
            for payload_id, kind, received, at, attempts, error, size in rows
        ]

    result: list[dict[str, Any]] = store.run(work)
    return result


def export(store: AnalyticsStore, project: str, environment: str) -> Iterator[bytes]:
    """Every payload held, oldest first, as JSON lines: the listing's fields plus `payload`, the
    body exactly as it was accepted (JSON text, as a string)."""
    after = 0
    while True:
        rows = _page(store, project, environment, after=after, payload_ids=None)
        for row in rows:
            yield (
                orjson.dumps(
                    {
                        "payloadId": row.payload_id,
                        "kind": row.kind.name.lower(),
                        "receivedAt": row.received_ms,
                        "quarantinedAt": row.quarantined_ms,
                        "attempts": row.attempts,
                        "error": row.error,
                        "payload": row.body.decode("utf-8", errors="replace"),
                    }
                )
                + b"\n"
            )
        if len(rows) < PAGE:
            return
        after = rows[-1].id


def reprocess(
    store: AnalyticsStore,
    project: str,
    environment: str,
    *,
    payload_ids: Sequence[str] | None,
    now_ms: int,
) -> Reprocessed:
    """Process held payloads again (all of the environment's, or those named), each in its own
    transaction that also takes it out of the quarantine: one that now succeeds is counted once;
    one that fails again stays, with its new error and one more attempt. The store being
    unavailable stops the pass (`StoreUnavailable`); what was done stays done."""
    done = 0
    failed: list[Failure] = []
    after = 0
    wanted = None if payload_ids is None else sorted(set(payload_ids))
    while True:
        rows = _page(store, project, environment, after=after, payload_ids=wanted)
        for row in rows:
            try:
                store.run(partial(_process, store=store, row=row, now_ms=now_ms))
            except StoreUnavailable:
                raise
            except Exception as exc:
                error = error_text(exc)
                store.run(partial(_failed_again, row=row, error=error))
                failed.append(Failure(row.payload_id, error))
            else:
                done += 1
        if len(rows) < PAGE:
            break
        after = rows[-1].id
    return Reprocessed(done, failed, count(store, project, environment))


@dataclass(frozen=True, slots=True)
class Held:
    id: int
    payload_id: str
    kind: Kind
    seq: int
    received_ms: int
    quarantined_ms: int
    attempts: int
    error: str
    body: bytes
    project: str
    environment: str

    def record(self) -> Record:
        return Record(
            seq=self.seq,
            received_ms=self.received_ms,
            kind=self.kind,
            project=self.project,
            environment=self.environment,
            payload_id=self.payload_id,
            payload=self.body,
        )


def _scope(project: str, environment: str) -> Any:
    return and_(quarantined.c.project == project, quarantined.c.environment == environment)


def _page(
    store: AnalyticsStore,
    project: str,
    environment: str,
    *,
    after: int,
    payload_ids: Sequence[str] | None,
) -> list[Held]:
    def work(connection: Connection) -> list[Held]:
        query = select(quarantined).where(_scope(project, environment), quarantined.c.id > after)
        if payload_ids is not None:
            query = query.where(quarantined.c.payload_id.in_(payload_ids))
        rows = connection.execute(query.order_by(quarantined.c.id).limit(PAGE)).mappings()
        return [
            Held(
                id=int(row["id"]),
                payload_id=row["payload_id"],
                kind=Kind(row["kind"]),
                seq=int(row["seq"]),
                received_ms=int(row["received_ms"]),
                quarantined_ms=int(row["quarantined_ms"]),
                attempts=int(row["attempts"]),
                error=row["error"],
                body=bytes(row["body"]),
                project=project,
                environment=environment,
            )
            for row in rows
        ]

    result: list[Held] = store.run(work)
    return result


def _process(connection: Connection, *, store: AnalyticsStore, row: Held, now_ms: int) -> None:
    # its id was marked processed when it was quarantined: unmark it so the commit counts it
    connection.execute(
        delete(payloads).where(
            payloads.c.project == row.project,
            payloads.c.environment == row.environment,
            payloads.c.payload_id == row.payload_id,
        )
    )
    store.commit_in(connection, None, [row.record()], now_ms=now_ms)
    connection.execute(delete(quarantined).where(quarantined.c.id == row.id))


def _failed_again(connection: Connection, *, row: Held, error: str) -> None:
    connection.execute(
        update(quarantined)
        .where(quarantined.c.id == row.id)
        .values(attempts=quarantined.c.attempts + 1, error=error)
    )
