"""The SQL repository of worker leases (table `worker_leases`, one row per job). Taking a lease
locks its row: PostgreSQL skips a row another taker holds (`FOR UPDATE SKIP LOCKED`) rather than
queueing behind it; SQLite's writers already hold the database lock (`BEGIN IMMEDIATE`). Never
commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, select, update
from sqlalchemy.exc import IntegrityError

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.ports import LeaseRecord


class SqlLeases:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def acquire(
        self, name: str, holder: str, *, now: datetime, until: datetime
    ) -> LeaseRecord | None:
        table = schema.worker_leases
        connection = self._tx.writable()
        query = select(table).where(table.c.name == name)
        if connection.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        row = connection.execute(query).first()
        if row is None:
            return self._insert(name, holder, now=now, until=until)
        current = _lease(row)
        now_ms = to_millis(now)
        if current.holder != holder and to_millis(current.expires) > now_ms:
            return None
        renewing = current.holder == holder and to_millis(current.expires) > now_ms
        values: dict[str, Any] = {"expires_ms": to_millis(until)}
        if not renewing:
            values.update(holder=holder, fence=current.fence + 1, acquired_ms=now_ms)
        connection.execute(update(table).where(table.c.name == name).values(values))
        return self._get(name)

    def _insert(
        self, name: str, holder: str, *, now: datetime, until: datetime
    ) -> LeaseRecord | None:
        """A first holder: or, on PostgreSQL, a row another taker has locked (SKIP LOCKED hid
        it), which the insert finds taken: then the lease is that taker's."""
        values = {
            "name": name,
            "holder": holder,
            "expires_ms": to_millis(until),
            "fence": 1,
            "acquired_ms": to_millis(now),
        }
        try:
            # a savepoint, so a taken name leaves the transaction usable on PostgreSQL
            with self._tx.writable().begin_nested():
                self._tx.writable().execute(schema.worker_leases.insert().values(values))
        except IntegrityError:
            return None
        return self._get(name)

    def holds(self, name: str, holder: str, fence: int, now: datetime) -> bool:
        table = schema.worker_leases
        row = self._tx.connection.execute(
            select(table.c.name).where(
                table.c.name == name,
                table.c.holder == holder,
                table.c.fence == fence,
                table.c.expires_ms > to_millis(now),
            )
        ).first()
        return row is not None

    def release(self, name: str, holder: str) -> None:
        table = schema.worker_leases
        self._tx.writable().execute(
            update(table).where(table.c.name == name, table.c.holder == holder).values(expires_ms=0)
        )

    def list(self) -> list[LeaseRecord]:
        table = schema.worker_leases
        rows = self._tx.connection.execute(select(table).order_by(table.c.name))
        return [_lease(row) for row in rows]

    def _get(self, name: str) -> LeaseRecord | None:
        table = schema.worker_leases
        row = self._tx.connection.execute(select(table).where(table.c.name == name)).first()
        return None if row is None else _lease(row)


def _lease(row: Row[Any]) -> LeaseRecord:
    return LeaseRecord(
        name=row.name,
        holder=row.holder,
        expires=from_millis(row.expires_ms),
        fence=row.fence,
        acquired=from_millis(row.acquired_ms),
    )
