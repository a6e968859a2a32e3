"""The SQL repository of keyed documents (tables `metrics`, `experiments`
and `automated_releases`). Rows to records
and back inside the unit of work's transaction; never commits."""

from __future__ import annotations

import builtins
from typing import Any

import orjson
from sqlalchemy import Row, Table, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import AlreadyExists
from flagstaff_server.services.experiment_ports import KeyedRecord


class SqlKeyed:
    def __init__(self, tx: Transaction, table: Table, what: str) -> None:
        self._tx, self._table, self._what = tx, table, what

    def _where(self, project: str, environment: str, key: str) -> Any:
        c = self._table.c
        return (c.project == project) & (c.environment == environment) & (c.key == key)

    def get(self, project: str, environment: str, key: str) -> KeyedRecord | None:
        row = self._tx.connection.execute(
            select(self._table).where(self._where(project, environment, key))
        ).first()
        return None if row is None else _record(row)

    def add(self, record: KeyedRecord) -> None:
        try:
            self._tx.insert_row(self._table, _values(record), taken="")
        except AlreadyExists as exc:
            raise AlreadyExists(f"{self._what} {record.key!r} already exists", path="/key") from exc

    def replace(self, record: KeyedRecord, expected_version: int) -> None:
        self._tx.replace_versioned(
            self._table,
            self._where(record.project, record.environment, record.key),
            expected_version=expected_version,
            values=_values(record),
            what=f"{self._what} {record.key!r}",
            missing=f"no {self._what} {record.key!r}",
        )

    def delete(self, project: str, environment: str, key: str) -> None:
        self._tx.delete_row(
            self._table,
            self._where(project, environment, key),
            missing=f"no {self._what} {key!r}",
        )

    def list(self, project: str, environment: str) -> list[KeyedRecord]:
        c = self._table.c
        rows = self._tx.connection.execute(
            select(self._table)
            .where(c.project == project, c.environment == environment)
            .order_by(c.created_ms, c.id)
        )
        return [_record(row) for row in rows]

    def everywhere(self) -> builtins.list[KeyedRecord]:
        c = self._table.c
        rows = self._tx.connection.execute(select(self._table).order_by(c.created_ms, c.id))
        return [_record(row) for row in rows]


def _values(record: KeyedRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "project": record.project,
        "environment": record.environment,
        "key": record.key,
        "version": record.version,
        "created_ms": to_millis(record.created),
        "doc": dump(record.doc),
    }


def _record(row: Row[Any]) -> KeyedRecord:
    return KeyedRecord(
        id=row.id,
        project=row.project,
        environment=row.environment,
        key=row.key,
        version=row.version,
        created=from_millis(row.created_ms),
        doc=orjson.loads(row.doc),
    )
