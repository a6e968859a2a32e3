"""The SQL repository of projects. Rows to records and back inside the unit of work's
transaction; never commits."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Row, bindparam, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import AlreadyExists
from flagstaff_server.services.ports import ProjectRecord

_GET = select(schema.projects).where(schema.projects.c.key == bindparam("key"))
"""Built once, as flag_repository's reads are."""


class SqlProjects:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, key: str) -> ProjectRecord | None:
        row = self._tx.connection.execute(_GET, {"key": key}).first()
        return None if row is None else _project(row)

    def list(self) -> list[ProjectRecord]:
        rows = self._tx.connection.execute(select(schema.projects).order_by(schema.projects.c.key))
        return [_project(row) for row in rows]

    def add(self, record: ProjectRecord) -> None:
        self._tx.writable()  # a read-only unit of work refuses before it reads
        taken = f"project {record.key!r} already exists"
        if self.get(record.key) is not None:
            raise AlreadyExists(taken)
        self._tx.insert_row(schema.projects, _project_row(record), taken=taken)

    def replace(self, record: ProjectRecord) -> None:
        table = schema.projects
        missing = f"project {record.key!r} not found"
        self._tx.update_row(
            table, table.c.key == record.key, values=_project_row(record), missing=missing
        )

    def delete(self, key: str) -> None:
        table = schema.projects
        self._tx.delete_row(table, table.c.key == key, missing=f"project {key!r} not found")


def _project_row(record: ProjectRecord) -> dict[str, Any]:
    return {
        "key": record.key,
        "name": record.name,
        "tags": dump(list(record.tags)),
        "doc": dump(record.doc),
        "created_ms": to_millis(record.created),
    }


def _project(row: Row[Any]) -> ProjectRecord:
    return ProjectRecord(
        key=row.key,
        name=row.name,
        tags=tuple(orjson.loads(row.tags)),
        doc=orjson.loads(row.doc),
        created=from_millis(row.created_ms),
    )
