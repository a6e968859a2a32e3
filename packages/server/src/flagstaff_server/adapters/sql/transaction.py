"""The connection of one unit of work and the row writes every SQL repository shares, each
turning "no row" or "key taken" into the store's errors. Never commits; driver errors are left
to the store to translate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, Table, delete, insert, update
from sqlalchemy.exc import IntegrityError

from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.ports import FlagRecord, SegmentRecord


class Transaction:
    """The connection of one unit of work and whether it may write."""

    def __init__(self, connection: Connection, *, read_only: bool) -> None:
        self.connection = connection
        self.read_only = read_only

    def locking(self, query: Select[Any], for_update: bool) -> Select[Any]:
        """The query, locking its rows until commit when asked in a writing transaction.
        SQLite has no row locks and needs none: its writers hold the database lock."""
        if for_update and not self.read_only and self.connection.dialect.name == "postgresql":
            return query.with_for_update()
        return query

    def writable(self) -> Connection:
        if self.read_only:
            raise RuntimeError("write in a read-only unit of work")
        return self.connection

    def insert_row(self, table: Table, values: Mapping[str, Any], *, taken: str) -> None:
        """Insert one row; a unique key already taken is `AlreadyExists(taken)`."""
        try:
            self.writable().execute(insert(table).values(values))
        except IntegrityError as exc:
            raise AlreadyExists(taken) from exc

    def update_row(
        self, table: Table, *where: ColumnElement[bool], values: Mapping[str, Any], missing: str
    ) -> None:
        """Update the row `where` selects; when there is none, `NotFound(missing)`."""
        result = self.writable().execute(update(table).where(*where).values(values))
        if result.rowcount == 0:
            raise NotFound(missing)

    def delete_row(self, table: Table, *where: ColumnElement[bool], missing: str) -> None:
        """Delete the row `where` selects; when there is none, `NotFound(missing)`."""
        result = self.writable().execute(delete(table).where(*where))
        if result.rowcount == 0:
            raise NotFound(missing)


def raise_missing_or_stale(
    current: FlagRecord | SegmentRecord | None, what: str, expected: int | None
) -> None:
    """A versioned write matched no row: the record is gone, or at another version."""
    if current is None:
        raise NotFound(f"{what} not found")
    raise VersionConflict(
        f"{what} is at version {current.version}, not {expected}", path="/_version"
    )
