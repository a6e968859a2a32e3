"""The SQL repository of scheduled changes (table `scheduled_changes`). A claim locks the change's
row until commit: PostgreSQL skips a row another worker's transaction holds (`FOR UPDATE SKIP
LOCKED`); SQLite's writers already hold the database lock. Never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Row, delete, func, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.ports import ScheduledChangeRecord, ScheduledChangeStatus

_TABLE = schema.scheduled_changes


class SqlScheduledChanges:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, change_id: str) -> ScheduledChangeRecord | None:
        row = self._tx.connection.execute(select(_TABLE).where(_TABLE.c.id == change_id)).first()
        return None if row is None else _record(row)

    def due(self, now: datetime, limit: int) -> list[ScheduledChangeRecord]:
        rows = self._tx.connection.execute(
            select(_TABLE)
            .where(_TABLE.c.status == "pending", _TABLE.c.execution_ms <= to_millis(now))
            .order_by(_TABLE.c.execution_ms, _TABLE.c.id)
            .limit(max(limit, 0))
        )
        return [_record(row) for row in rows]

    def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        count, oldest = self._tx.connection.execute(
            select(func.count(), func.min(_TABLE.c.execution_ms)).where(
                _TABLE.c.status == "pending", _TABLE.c.execution_ms <= to_millis(now)
            )
        ).one()
        return int(count), (None if oldest is None else from_millis(oldest))

    def claim(self, change_id: str) -> ScheduledChangeRecord | None:
        connection = self._tx.writable()
        query = select(_TABLE).where(_TABLE.c.id == change_id, _TABLE.c.status == "pending")
        if connection.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        row = connection.execute(query).first()
        return None if row is None else _record(row)

    def add(self, record: ScheduledChangeRecord) -> None:
        self._tx.insert_row(
            _TABLE, _values(record), taken=f"scheduled change {record.id!r} already exists"
        )

    def replace(self, record: ScheduledChangeRecord, expected_version: int) -> None:
        self._tx.replace_versioned(
            _TABLE,
            _TABLE.c.id == record.id,
            expected_version=expected_version,
            values=_values(record),
            what=f"scheduled change {record.id!r}",
        )

    def delete(self, change_id: str) -> None:
        self._tx.delete_row(
            _TABLE, _TABLE.c.id == change_id, missing=f"no scheduled change {change_id!r}"
        )

    def delete_pending(self, project: str, flag: str) -> int:
        result = self._tx.writable().execute(
            delete(_TABLE).where(
                _TABLE.c.project == project, _TABLE.c.flag == flag, _TABLE.c.status == "pending"
            )
        )
        return int(result.rowcount)

    def list(
        self,
        project: str,
        flag: str,
        *,
        environment: str | None = None,
        status: ScheduledChangeStatus | None = "pending",
    ) -> list[ScheduledChangeRecord]:
        query = select(_TABLE).where(_TABLE.c.project == project, _TABLE.c.flag == flag)
        if environment is not None:
            query = query.where(_TABLE.c.environment == environment)
        if status is not None:
            query = query.where(_TABLE.c.status == status)
        rows = self._tx.connection.execute(query.order_by(_TABLE.c.execution_ms, _TABLE.c.id))
        return [_record(row) for row in rows]


def _values(record: ScheduledChangeRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "project": record.project,
        "flag": record.flag,
        "environment": record.environment,
        "execution_ms": to_millis(record.execution),
        "status": record.status,
        "version": record.version,
        "created_ms": to_millis(record.created),
        "doc": dump(record.doc),
    }


def _record(row: Row[Any]) -> ScheduledChangeRecord:
    return ScheduledChangeRecord(
        id=row.id,
        project=row.project,
        flag=row.flag,
        environment=row.environment,
        execution=from_millis(row.execution_ms),
        status=row.status,
        version=row.version,
        created=from_millis(row.created_ms),
        doc=orjson.loads(row.doc),
    )
