"""The SQL repository of change records (the outbox delivery reads), numbered without gaps by
one counter row (only an epoch start moves it a gap on). Rows to records and back inside the
unit of work's transaction; never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import Row, insert, select, update

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump_optional, load_optional
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.services.ports import Change, ChangeKind, JsonObject


class SqlChanges:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def append(
        self,
        *,
        project: str,
        environment: str,
        kind: ChangeKind,
        key: str,
        version: int,
        item: JsonObject | None,
        at: datetime,
    ) -> int:
        connection, counter = self._tx.writable(), schema.change_counter
        # Updating the counter row locks it until this transaction ends, so the next writer
        # gets the next number only after this one committed (or rolled back and returned it).
        seq, epoch = connection.execute(
            update(counter)
            .where(counter.c.id == 1)
            .values(seq=counter.c.seq + 1)
            .returning(counter.c.seq, counter.c.epoch)
        ).one()
        connection.execute(
            insert(schema.changes).values(
                seq=seq,
                epoch=epoch,
                project=project,
                environment=environment,
                kind=kind,
                key=key,
                version=version,
                item=dump_optional(item),
                at_ms=to_millis(at),
            )
        )
        return int(seq)

    def since(self, after_seq: int, limit: int = 1000) -> list[Change]:
        table = schema.changes
        rows = self._tx.connection.execute(
            select(table).where(table.c.seq > after_seq).order_by(table.c.seq).limit(max(limit, 0))
        )
        return [_change(row) for row in rows]

    def latest_seq(self) -> int:
        counter = schema.change_counter
        seq = self._tx.connection.execute(
            select(counter.c.seq).where(counter.c.id == 1)
        ).scalar_one()
        return int(seq)


def _change(row: Row[Any]) -> Change:
    return Change(
        seq=row.seq,
        epoch=row.epoch,
        project=row.project,
        environment=row.environment,
        kind=cast(ChangeKind, row.kind),
        key=row.key,
        version=row.version,
        item=load_optional(row.item),
        at=from_millis(row.at_ms),
    )
