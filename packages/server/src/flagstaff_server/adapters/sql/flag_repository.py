"""The SQL repository of flags, compare-and-set on `version`. Rows to records and back inside
the unit of work's transaction; never commits."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Row, bindparam, delete, select

from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.project_repository import SqlProjects
from flagstaff_server.adapters.sql.transaction import Transaction, raise_missing_or_stale
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import FlagRecord

# Built once: statement building is a large share of a read's cost (docs/management-api.md,
# "Profile"); SQLAlchemy then reuses the compiled form, keyed by the statement's memoized key.
_GET = select(schema.flags).where(
    schema.flags.c.project == bindparam("project"), schema.flags.c.key == bindparam("key")
)
_GET_FOR_UPDATE = _GET.with_for_update()


class SqlFlags:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, project: str, key: str, *, for_update: bool = False) -> FlagRecord | None:
        query = _GET_FOR_UPDATE if self._tx.locks(for_update) else _GET
        row = self._tx.connection.execute(query, {"project": project, "key": key}).first()
        return None if row is None else _flag(row)

    def list(self, project: str) -> list[FlagRecord]:
        table = schema.flags
        rows = self._tx.connection.execute(
            select(table).where(table.c.project == project).order_by(table.c.key)
        )
        return [_flag(row) for row in rows]

    def add(self, record: FlagRecord) -> None:
        self._tx.writable()  # a read-only unit of work refuses before it reads
        if SqlProjects(self._tx).get(record.project) is None:
            raise NotFound(f"project {record.project!r} not found")
        if self.get(record.project, record.key) is not None:
            raise AlreadyExists(f"flag {record.key!r} already exists")
        row = {
            "project": record.project,
            "key": record.key,
            "version": record.version,
            "doc": dump(record.doc),
        }
        self._tx.insert_row(schema.flags, row, taken=f"flag {record.key!r} already exists")

    def replace(self, record: FlagRecord, expected_version: int) -> None:
        table = schema.flags
        self._tx.replace_versioned(
            table,
            table.c.project == record.project,
            table.c.key == record.key,
            expected_version=expected_version,
            values={"version": record.version, "doc": dump(record.doc)},
            what=f"flag {record.key!r}",
        )

    def delete(self, project: str, key: str, expected_version: int | None = None) -> None:
        table = schema.flags
        conditions = [table.c.project == project, table.c.key == key]
        if expected_version is not None:
            conditions.append(table.c.version == expected_version)
        result = self._tx.writable().execute(delete(table).where(*conditions))
        if result.rowcount == 0:
            raise_missing_or_stale(self.get(project, key), f"flag {key!r}", expected_version)


def _flag(row: Row[Any]) -> FlagRecord:
    return FlagRecord(
        project=row.project, key=row.key, version=row.version, doc=orjson.loads(row.doc)
    )
