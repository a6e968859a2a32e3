"""The SQL repository of approval requests (table `approval_requests`). Every step is a
compare-and-set on the row's version. Never commits."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Row, delete, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.approval_ports import ApprovalRequestRecord, ApprovalResourceKind

_TABLE = schema.approval_requests


class SqlApprovalRequests:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, request_id: str) -> ApprovalRequestRecord | None:
        row = self._tx.connection.execute(select(_TABLE).where(_TABLE.c.id == request_id)).first()
        return None if row is None else _record(row)

    def add(self, record: ApprovalRequestRecord) -> None:
        self._tx.insert_row(
            _TABLE, _values(record), taken=f"approval request {record.id!r} already exists"
        )

    def replace(self, record: ApprovalRequestRecord, expected_version: int) -> None:
        self._tx.replace_versioned(
            _TABLE,
            _TABLE.c.id == record.id,
            expected_version=expected_version,
            values=_values(record),
            what=f"approval request {record.id!r}",
        )

    def delete(self, request_id: str) -> None:
        self._tx.delete_row(
            _TABLE, _TABLE.c.id == request_id, missing=f"no approval request {request_id!r}"
        )

    def delete_pending(self, project: str, kind: ApprovalResourceKind, key: str) -> int:
        result = self._tx.writable().execute(
            delete(_TABLE).where(
                _TABLE.c.project == project,
                _TABLE.c.kind == kind,
                _TABLE.c.resource_key == key,
                _TABLE.c.status == "pending",
            )
        )
        return int(result.rowcount)

    def list(
        self,
        *,
        project: str | None = None,
        kind: ApprovalResourceKind | None = None,
        key: str | None = None,
        environment: str | None = None,
    ) -> list[ApprovalRequestRecord]:
        query = select(_TABLE)
        for column, value in (
            (_TABLE.c.project, project),
            (_TABLE.c.kind, kind),
            (_TABLE.c.resource_key, key),
            (_TABLE.c.environment, environment),
        ):
            if value is not None:
                query = query.where(column == value)
        rows = self._tx.connection.execute(query.order_by(_TABLE.c.created_ms.desc(), _TABLE.c.id))
        return [_record(row) for row in rows]


def _values(record: ApprovalRequestRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "project": record.project,
        "kind": record.kind,
        "resource_key": record.key,
        "environment": record.environment,
        "status": record.status,
        "version": record.version,
        "created_ms": to_millis(record.created),
        "doc": dump(record.doc),
    }


def _record(row: Row[Any]) -> ApprovalRequestRecord:
    return ApprovalRequestRecord(
        id=row.id,
        project=row.project,
        kind=row.kind,
        key=row.resource_key,
        environment=row.environment,
        status=row.status,
        version=row.version,
        created=from_millis(row.created_ms),
        doc=orjson.loads(row.doc),
    )
