"""The SQL repository of database epochs (docs/storage.md, "Epochs"): the `epochs` rows, the
counter jump that starts one, and the PostgreSQL primary's timeline. Inside the unit of work's
transaction; never commits."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select, update

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.timeline import read_timeline
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import NotFound
from flagstaff_server.services.ports import DatabaseTimeline, EpochRecord

FIRST_EPOCH = EpochRecord(epoch=1, started_after_seq=0, at=from_millis(0), reason="initial")
"""What an `epochs` table without rows means (the migration records this row)."""

_CHECKED_TIMELINE = "flagstaff_timeline"
"""Key in a DBAPI connection's info: the timeline read on it while its server was a primary."""


class SqlEpochs:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def list(self) -> builtins.list[EpochRecord]:
        table = schema.epochs
        rows = self._tx.connection.execute(select(table).order_by(table.c.epoch)).all()
        recorded = [_epoch(row) for row in rows]
        if not recorded or recorded[0].epoch != 1:
            recorded.insert(0, FIRST_EPOCH)
        return recorded

    def current(self) -> EpochRecord:
        table = schema.epochs
        row = self._tx.connection.execute(
            select(table).order_by(table.c.epoch.desc()).limit(1)
        ).first()
        return FIRST_EPOCH if row is None else _epoch(row)

    def begin(
        self,
        *,
        reason: str,
        timeline: int | None,
        system_id: str | None,
        at: datetime,
        seq_gap: int,
    ) -> EpochRecord:
        connection, counter = self._tx.writable(), schema.change_counter
        self.lock()
        previous = self.current()
        seq, epoch = connection.execute(
            update(counter)
            .where(counter.c.id == 1)
            .values(seq=counter.c.seq + seq_gap, epoch=counter.c.epoch + 1)
            .returning(counter.c.seq, counter.c.epoch)
        ).one()
        # The counter and the table move together; a counter behind the table (a table
        # restored without its counter) still gets an epoch number above every recorded one.
        number = max(int(epoch), previous.epoch + 1)
        if number != epoch:
            connection.execute(update(counter).where(counter.c.id == 1).values(epoch=number))
        record = EpochRecord(
            epoch=number,
            started_after_seq=int(seq) - seq_gap,
            timeline=timeline,
            system_id=system_id,
            at=from_millis(to_millis(at)),
            reason=reason,
        )
        self._tx.insert_row(
            schema.epochs, _epoch_row(record), taken=f"epoch {number} already exists"
        )
        return record

    def lock(self) -> None:
        connection = self._tx.writable()
        if connection.dialect.name == "postgresql":
            # Writers lock a flag or segment row, then the counter (services append changes
            # last). Taking the tables in that order, and shutting writers out until commit,
            # means the version rewrite of an epoch start cannot deadlock with them. Readers
            # go on (EXCLUSIVE mode lets plain SELECTs through). SQLite's writers already hold
            # the whole database.
            connection.exec_driver_sql(
                "LOCK TABLE flags, segments, change_counter IN EXCLUSIVE MODE"
            )

    def record_timeline(self, epoch: int, timeline: int, system_id: str | None) -> None:
        table = schema.epochs
        values = {"timeline": timeline, "system_id": system_id}
        result = self._tx.writable().execute(
            update(table).where(table.c.epoch == epoch).values(values)
        )
        if result.rowcount:
            return
        if epoch != 1:
            raise NotFound(f"epoch {epoch} not found")
        # epoch 1 without its row (see FIRST_EPOCH)
        self._tx.insert_row(table, {**_epoch_row(FIRST_EPOCH), **values}, taken="epoch 1 exists")

    def timeline(self) -> DatabaseTimeline | None:
        # A primary's timeline cannot change while a connection to it lives (only a standby's
        # does, at promotion), so it is read once per connection; a standby is asked each time.
        connection = self._tx.connection
        if connection.dialect.name != "postgresql":
            return None
        cached = connection.info.get(_CHECKED_TIMELINE)
        if isinstance(cached, DatabaseTimeline):
            return cached
        found = read_timeline(connection)
        if found is not None:
            connection.info[_CHECKED_TIMELINE] = found
        return found


def _epoch_row(record: EpochRecord) -> dict[str, Any]:
    return {
        "epoch": record.epoch,
        "started_after_seq": record.started_after_seq,
        "timeline": record.timeline,
        "system_id": record.system_id,
        "at_ms": to_millis(record.at),
        "reason": record.reason,
    }


def _epoch(row: Row[Any]) -> EpochRecord:
    return EpochRecord(
        epoch=row.epoch,
        started_after_seq=row.started_after_seq,
        timeline=row.timeline,
        system_id=row.system_id,
        at=from_millis(row.at_ms),
        reason=row.reason,
    )
