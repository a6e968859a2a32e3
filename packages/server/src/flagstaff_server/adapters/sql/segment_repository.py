"""The SQL repository of segments (one environment each), compare-and-set on `version`.
Rows to records and back inside the unit of work's transaction; never commits."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Row, delete, select

from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.environment_repository import SqlEnvironments
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction, raise_missing_or_stale
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import SegmentRecord


class SqlSegments:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(
        self, project: str, environment: str, key: str, *, for_update: bool = False
    ) -> SegmentRecord | None:
        table = schema.segments
        query = select(table).where(
            table.c.project == project, table.c.environment == environment, table.c.key == key
        )
        row = self._tx.connection.execute(self._tx.locking(query, for_update)).first()
        return None if row is None else _segment(row)

    def list(self, project: str, environment: str) -> list[SegmentRecord]:
        table = schema.segments
        rows = self._tx.connection.execute(
            select(table)
            .where(table.c.project == project, table.c.environment == environment)
            .order_by(table.c.key)
        )
        return [_segment(row) for row in rows]

    def add(self, record: SegmentRecord) -> None:
        self._tx.writable()  # a read-only unit of work refuses before it reads
        if SqlEnvironments(self._tx).get(record.project, record.environment) is None:
            raise NotFound(f"environment {record.environment!r} not found")
        if self.get(record.project, record.environment, record.key) is not None:
            raise AlreadyExists(f"segment {record.key!r} already exists")
        row = {
            "project": record.project,
            "environment": record.environment,
            "key": record.key,
            "version": record.version,
            "doc": dump(record.doc),
        }
        self._tx.insert_row(schema.segments, row, taken=f"segment {record.key!r} already exists")

    def replace(self, record: SegmentRecord, expected_version: int) -> None:
        table = schema.segments
        self._tx.replace_versioned(
            table,
            table.c.project == record.project,
            table.c.environment == record.environment,
            table.c.key == record.key,
            expected_version=expected_version,
            values={"version": record.version, "doc": dump(record.doc)},
            what=f"segment {record.key!r}",
        )

    def delete(
        self, project: str, environment: str, key: str, expected_version: int | None = None
    ) -> None:
        table = schema.segments
        conditions = [
            table.c.project == project,
            table.c.environment == environment,
            table.c.key == key,
        ]
        if expected_version is not None:
            conditions.append(table.c.version == expected_version)
        result = self._tx.writable().execute(delete(table).where(*conditions))
        if result.rowcount == 0:
            current = self.get(project, environment, key)
            raise_missing_or_stale(current, f"segment {key!r}", expected_version)


def _segment(row: Row[Any]) -> SegmentRecord:
    return SegmentRecord(
        project=row.project,
        environment=row.environment,
        key=row.key,
        version=row.version,
        doc=orjson.loads(row.doc),
    )
