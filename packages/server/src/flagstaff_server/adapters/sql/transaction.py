"""The connection of one unit of work and the row writes every SQL repository shares, each
turning "no row" or "key taken" into the store's errors. Never commits; driver errors are left
to the store to translate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, Table, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.ports import FlagRecord, SegmentRecord


class Transaction:
    """The connection of one unit of work and whether it may write."""

    def __init__(self, connection: Connection, *, read_only: bool) -> None:
        self.connection = connection
        self.read_only = read_only

    def locking(self, query: Select[Any], for_update: bool) -> Select[Any]:
        """The query, locking its rows until commit when asked in a writing transaction."""
        return query.with_for_update() if self.locks(for_update) else query

    def locks(self, for_update: bool) -> bool:
        """Whether a read asked `for_update` locks its rows until commit: in a writing
        transaction on PostgreSQL. SQLite has no row locks and needs none: its writers hold the
        database lock."""
        return for_update and not self.read_only and self.connection.dialect.name == "postgresql"

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

    def replace_versioned(
        self,
        table: Table,
        *where: ColumnElement[bool],
        expected_version: int,
        values: Mapping[str, Any],
        what: str,
        missing: str | None = None,
    ) -> None:
        """Update the row `where` selects only while its `version` column is `expected_version`.
        When no row matched: `NotFound(missing)` (default "<what> not found") if there is none,
        else `VersionConflict` naming `/_version`. The version test is part of the UPDATE, so a
        concurrent writer that committed first makes it match no row (PostgreSQL re-checks the
        condition after waiting for that writer)."""
        result = self.writable().execute(
            update(table).where(*where, table.c.version == expected_version).values(values)
        )
        if result.rowcount == 0:
            current = self.connection.execute(select(table.c.version).where(*where)).first()
            raise _missing_or_stale(
                None if current is None else int(current.version), what, expected_version, missing
            )

    def delete_row(self, table: Table, *where: ColumnElement[bool], missing: str) -> None:
        """Delete the row `where` selects; when there is none, `NotFound(missing)`."""
        result = self.writable().execute(delete(table).where(*where))
        if result.rowcount == 0:
            raise NotFound(missing)


def raise_missing_or_stale(
    current: FlagRecord | SegmentRecord | None, what: str, expected: int | None
) -> None:
    """A versioned write matched no row: the record is gone, or at another version."""
    raise _missing_or_stale(None if current is None else current.version, what, expected, None)


def _missing_or_stale(
    version: int | None, what: str, expected: int | None, missing: str | None
) -> NotFound | VersionConflict:
    if version is None:
        return NotFound(missing if missing is not None else f"{what} not found")
    return VersionConflict(f"{what} is at version {version}, not {expected}", path="/_version")
