"""The SQL repository of environments, with their retired credentials (keys still accepted until
they expire). Rows to records and back inside the unit of work's transaction; never commits."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, cast

import orjson
from sqlalchemy import Row, and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.project_repository import SqlProjects
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import CredentialKind, EnvironmentRecord, RetiredCredential

_CREDENTIAL_COLUMN: Mapping[CredentialKind, str] = {
    "sdk": "sdk_key",
    "mobile": "mobile_key",
    "client_side": "client_side_id",
}


class SqlEnvironments:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, project: str, key: str) -> EnvironmentRecord | None:
        table = schema.environments
        found = self._read(and_(table.c.project == project, table.c.key == key))
        return found[0] if found else None

    def list(self, project: str | None = None) -> list[EnvironmentRecord]:
        table = schema.environments
        return self._read(None if project is None else table.c.project == project)

    def add(self, record: EnvironmentRecord) -> None:
        connection = self._tx.writable()
        if SqlProjects(self._tx).get(record.project) is None:
            raise NotFound(f"project {record.project!r} not found")
        if self.get(record.project, record.key) is not None:
            raise AlreadyExists(f"environment {record.key!r} already exists")
        try:
            connection.execute(insert(schema.environments).values(_environment_row(record)))
            self._write_retired(record)
        except IntegrityError as exc:
            raise AlreadyExists(
                f"environment {record.key!r} or one of its keys already exists"
            ) from exc

    def replace(self, record: EnvironmentRecord) -> None:
        table = schema.environments
        try:
            result = self._tx.writable().execute(
                update(table)
                .where(table.c.project == record.project, table.c.key == record.key)
                .values(_environment_row(record))
            )
            if result.rowcount == 0:
                raise NotFound(f"environment {record.key!r} not found")
            self._write_retired(record)
        except IntegrityError as exc:
            raise AlreadyExists("one of the environment's keys is used elsewhere") from exc

    def delete(self, project: str, key: str) -> None:
        table = schema.environments
        where = (table.c.project == project, table.c.key == key)
        self._tx.delete_row(table, *where, missing=f"environment {key!r} not found")

    def find_by_credential(
        self, kind: CredentialKind, value: str, now: datetime
    ) -> EnvironmentRecord | None:
        table, retired = schema.environments, schema.retired_credentials
        found = self._read(table.c[_CREDENTIAL_COLUMN[kind]] == value)
        if found:
            return found[0]
        owner = self._tx.connection.execute(
            select(retired.c.project, retired.c.environment).where(
                retired.c.kind == kind,
                retired.c.value == value,
                retired.c.expires_ms > to_millis(now),
            )
        ).first()
        return None if owner is None else self.get(owner.project, owner.environment)

    def _read(self, condition: Any) -> builtins.list[EnvironmentRecord]:
        table, retired = schema.environments, schema.retired_credentials
        query = select(table).order_by(table.c.project, table.c.key)
        if condition is not None:
            query = query.where(condition)
        rows = self._tx.connection.execute(query).all()
        if not rows:
            return []
        retired_query = select(retired).order_by(retired.c.expires_ms, retired.c.kind)
        if len(rows) == 1:
            retired_query = retired_query.where(
                retired.c.project == rows[0].project, retired.c.environment == rows[0].key
            )
        by_environment: dict[tuple[str, str], builtins.list[RetiredCredential]] = {}
        for r in self._tx.connection.execute(retired_query):
            by_environment.setdefault((r.project, r.environment), []).append(
                RetiredCredential(
                    kind=cast(CredentialKind, r.kind),
                    value=r.value,
                    expires=from_millis(r.expires_ms),
                )
            )
        return [_environment(row, by_environment.get((row.project, row.key), ())) for row in rows]

    def _write_retired(self, record: EnvironmentRecord) -> None:
        connection, retired = self._tx.writable(), schema.retired_credentials
        connection.execute(
            delete(retired).where(
                retired.c.project == record.project, retired.c.environment == record.key
            )
        )
        if record.retired:
            connection.execute(
                insert(retired),
                [
                    {
                        "kind": r.kind,
                        "value": r.value,
                        "project": record.project,
                        "environment": record.key,
                        "expires_ms": to_millis(r.expires),
                    }
                    for r in record.retired
                ],
            )


def _environment_row(record: EnvironmentRecord) -> dict[str, Any]:
    return {
        "project": record.project,
        "key": record.key,
        "name": record.name,
        "sdk_key": record.sdk_key,
        "mobile_key": record.mobile_key,
        "client_side_id": record.client_side_id,
        "secure_mode": record.secure_mode,
        "doc": dump(record.doc),
        "created_ms": to_millis(record.created),
    }


def _environment(row: Row[Any], retired: Iterable[RetiredCredential]) -> EnvironmentRecord:
    return EnvironmentRecord(
        project=row.project,
        key=row.key,
        name=row.name,
        sdk_key=row.sdk_key,
        mobile_key=row.mobile_key,
        client_side_id=row.client_side_id,
        retired=tuple(retired),
        secure_mode=bool(row.secure_mode),
        doc=orjson.loads(row.doc),
        created=from_millis(row.created_ms),
    )
