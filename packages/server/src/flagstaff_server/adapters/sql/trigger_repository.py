"""The SQL repository of flag triggers (table `flag_triggers`). Rows to records and back inside
the unit of work's transaction; never commits."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Row, delete, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.ports import TriggerRecord

_TABLE = schema.flag_triggers


class SqlTriggers:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, trigger_id: str) -> TriggerRecord | None:
        row = self._tx.connection.execute(select(_TABLE).where(_TABLE.c.id == trigger_id)).first()
        return None if row is None else _record(row)

    def add(self, record: TriggerRecord) -> None:
        self._tx.insert_row(_TABLE, _values(record), taken=f"trigger {record.id!r} already exists")

    def replace(self, record: TriggerRecord, expected_version: int) -> None:
        self._tx.replace_versioned(
            _TABLE,
            _TABLE.c.id == record.id,
            expected_version=expected_version,
            values=_values(record),
            what=f"trigger {record.id!r}",
        )

    def delete(self, trigger_id: str) -> None:
        self._tx.delete_row(_TABLE, _TABLE.c.id == trigger_id, missing=f"no trigger {trigger_id!r}")

    def delete_for_flag(self, project: str, flag: str) -> int:
        result = self._tx.writable().execute(
            delete(_TABLE).where(_TABLE.c.project == project, _TABLE.c.flag == flag)
        )
        return int(result.rowcount)

    def list(self, project: str, flag: str, environment: str) -> list[TriggerRecord]:
        rows = self._tx.connection.execute(
            select(_TABLE)
            .where(
                _TABLE.c.project == project,
                _TABLE.c.flag == flag,
                _TABLE.c.environment == environment,
            )
            .order_by(_TABLE.c.created_ms, _TABLE.c.id)
        )
        return [_record(row) for row in rows]


def _values(record: TriggerRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "project": record.project,
        "flag": record.flag,
        "environment": record.environment,
        "secret_hash": record.secret_hash,
        "enabled": record.enabled,
        "version": record.version,
        "created_ms": to_millis(record.created),
        "doc": dump(record.doc),
    }


def _record(row: Row[Any]) -> TriggerRecord:
    return TriggerRecord(
        id=row.id,
        project=row.project,
        flag=row.flag,
        environment=row.environment,
        secret_hash=row.secret_hash,
        enabled=bool(row.enabled),
        version=row.version,
        created=from_millis(row.created_ms),
        doc=orjson.loads(row.doc),
    )
