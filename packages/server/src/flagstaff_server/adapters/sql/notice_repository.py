"""The SQL repository of operator notices. Rows to records and back inside the unit of work's
transaction; never commits."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Row, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.ports import NoticeRecord


class SqlNotices:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, notice_id: str) -> NoticeRecord | None:
        table = schema.status_notices
        row = self._tx.connection.execute(select(table).where(table.c.id == notice_id)).first()
        return None if row is None else _notice(row)

    def list(self) -> list[NoticeRecord]:
        table = schema.status_notices
        rows = self._tx.connection.execute(
            select(table).order_by(table.c.created_ms.desc(), table.c.id)
        )
        return [_notice(row) for row in rows]

    def add(self, record: NoticeRecord) -> None:
        values = {
            "id": record.id,
            "created_ms": to_millis(record.created),
            "expires_ms": None if record.expires is None else to_millis(record.expires),
            "doc": dump(record.doc),
        }
        taken = f"notice {record.id!r} already exists"
        self._tx.insert_row(schema.status_notices, values, taken=taken)

    def delete(self, notice_id: str) -> None:
        table = schema.status_notices
        self._tx.delete_row(table, table.c.id == notice_id, missing=f"no notice {notice_id!r}")


def _notice(row: Row[Any]) -> NoticeRecord:
    return NoticeRecord(
        id=row.id,
        created=from_millis(row.created_ms),
        expires=None if row.expires_ms is None else from_millis(row.expires_ms),
        doc=orjson.loads(row.doc),
    )
