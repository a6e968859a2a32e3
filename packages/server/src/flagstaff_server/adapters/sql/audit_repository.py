"""The SQL repository of the audit log: appended in order, listed newest first.
Rows to records and back inside the unit of work's transaction; never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump_optional, load_optional
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.ports import AuditEntry


class SqlAudit:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def append(self, entry: AuditEntry) -> None:
        # no existence check first: ids are generated, so a clash is a bug, not a user error,
        # and the round trip would be paid by every write
        connection, table = self._tx.writable(), schema.audit
        # concurrent transactions may take the same number; ties between them are broken by id
        last = connection.execute(select(func.max(table.c.pos))).scalar_one_or_none()
        row = {
            "pos": (last or 0) + 1,
            "id": entry.id,
            "at_ms": to_millis(entry.at),
            "actor": entry.actor,
            "kind": entry.kind,
            "resource": entry.resource,
            "action": entry.action,
            "comment": entry.comment,
            "patch": dump_optional(entry.patch),
            "before": dump_optional(entry.before),
            "after": dump_optional(entry.after),
        }
        self._tx.insert_row(table, row, taken=f"audit entry {entry.id!r} already exists")

    def get(self, entry_id: str) -> AuditEntry | None:
        table = schema.audit
        row = self._tx.connection.execute(select(table).where(table.c.id == entry_id)).first()
        return None if row is None else _audit(row)

    def list(
        self,
        *,
        resource_prefix: str | None = None,
        kind: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        table = schema.audit
        query = select(table).order_by(table.c.at_ms.desc(), table.c.pos.desc(), table.c.id.desc())
        if resource_prefix is not None:
            query = query.where(table.c.resource.startswith(resource_prefix, autoescape=True))
        if kind is not None:
            query = query.where(table.c.kind == kind)
        if since is not None:
            query = query.where(table.c.at_ms >= to_millis(since))
        if until is not None:
            query = query.where(table.c.at_ms < to_millis(until))
        rows = self._tx.connection.execute(query.limit(max(limit, 0)))
        return [_audit(row) for row in rows]


def _audit(row: Row[Any]) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        at=from_millis(row.at_ms),
        actor=row.actor,
        kind=row.kind,
        resource=row.resource,
        action=row.action,
        comment=row.comment,
        patch=load_optional(row.patch),
        before=load_optional(row.before),
        after=load_optional(row.after),
    )
