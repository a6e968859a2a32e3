"""Repositories of the SQL store: rows to records and back, on one connection inside one
transaction. They never commit, and leave driver errors to the store to translate."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import orjson
from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    Select,
    Table,
    and_,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.ports import (
    AuditEntry,
    Change,
    ChangeKind,
    CredentialKind,
    EnvironmentRecord,
    FlagRecord,
    JsonObject,
    ProjectRecord,
    RetiredCredential,
    Role,
    SegmentRecord,
    TokenRecord,
)


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode()


def _dump_optional(value: Any) -> str | None:
    return None if value is None else _dump(value)


def _load_optional(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


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


class SqlProjects:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, key: str) -> ProjectRecord | None:
        row = self._tx.connection.execute(
            select(schema.projects).where(schema.projects.c.key == key)
        ).first()
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
        "tags": _dump(list(record.tags)),
        "doc": _dump(record.doc),
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
        "doc": _dump(record.doc),
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


class SqlFlags:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, project: str, key: str, *, for_update: bool = False) -> FlagRecord | None:
        table = schema.flags
        query = select(table).where(table.c.project == project, table.c.key == key)
        row = self._tx.connection.execute(self._tx.locking(query, for_update)).first()
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
            "doc": _dump(record.doc),
        }
        self._tx.insert_row(schema.flags, row, taken=f"flag {record.key!r} already exists")

    def replace(self, record: FlagRecord, expected_version: int) -> None:
        table = schema.flags
        where = (table.c.project == record.project, table.c.key == record.key)
        # The version test is part of the UPDATE, so a concurrent writer that committed first
        # makes this match no row (PostgreSQL re-checks the condition after waiting for it).
        result = self._tx.writable().execute(
            update(table)
            .where(*where, table.c.version == expected_version)
            .values(version=record.version, doc=_dump(record.doc))
        )
        if result.rowcount == 0:
            _raise_missing_or_stale(
                self.get(record.project, record.key), f"flag {record.key!r}", expected_version
            )

    def delete(self, project: str, key: str, expected_version: int | None = None) -> None:
        table = schema.flags
        conditions = [table.c.project == project, table.c.key == key]
        if expected_version is not None:
            conditions.append(table.c.version == expected_version)
        result = self._tx.writable().execute(delete(table).where(*conditions))
        if result.rowcount == 0:
            _raise_missing_or_stale(self.get(project, key), f"flag {key!r}", expected_version)


def _flag(row: Row[Any]) -> FlagRecord:
    return FlagRecord(
        project=row.project, key=row.key, version=row.version, doc=orjson.loads(row.doc)
    )


def _raise_missing_or_stale(
    current: FlagRecord | SegmentRecord | None, what: str, expected: int | None
) -> None:
    if current is None:
        raise NotFound(f"{what} not found")
    raise VersionConflict(
        f"{what} is at version {current.version}, not {expected}", path="/_version"
    )


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
            "doc": _dump(record.doc),
        }
        self._tx.insert_row(schema.segments, row, taken=f"segment {record.key!r} already exists")

    def replace(self, record: SegmentRecord, expected_version: int) -> None:
        table = schema.segments
        result = self._tx.writable().execute(
            update(table)
            .where(
                table.c.project == record.project,
                table.c.environment == record.environment,
                table.c.key == record.key,
                table.c.version == expected_version,
            )
            .values(version=record.version, doc=_dump(record.doc))
        )
        if result.rowcount == 0:
            current = self.get(record.project, record.environment, record.key)
            _raise_missing_or_stale(current, f"segment {record.key!r}", expected_version)

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
            _raise_missing_or_stale(current, f"segment {key!r}", expected_version)


def _segment(row: Row[Any]) -> SegmentRecord:
    return SegmentRecord(
        project=row.project,
        environment=row.environment,
        key=row.key,
        version=row.version,
        doc=orjson.loads(row.doc),
    )


class SqlTokens:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, token_id: str) -> TokenRecord | None:
        return self._first(schema.tokens.c.id == token_id)

    def find_by_secret_hash(self, secret_hash: str) -> TokenRecord | None:
        return self._first(schema.tokens.c.secret_hash == secret_hash)

    def list(self) -> list[TokenRecord]:
        table = schema.tokens
        rows = self._tx.connection.execute(select(table).order_by(table.c.created_ms, table.c.id))
        return [_token(row) for row in rows]

    def add(self, record: TokenRecord) -> None:
        self._tx.writable()  # a read-only unit of work refuses before it reads
        if self.get(record.id) is not None:
            raise AlreadyExists(f"token {record.id!r} already exists")
        if self.find_by_secret_hash(record.secret_hash) is not None:
            raise AlreadyExists("a token with this secret already exists")
        taken = f"token {record.id!r} already exists"
        self._tx.insert_row(schema.tokens, _token_row(record), taken=taken)

    def replace(self, record: TokenRecord) -> None:
        table = schema.tokens
        missing = f"token {record.id!r} not found"
        self._tx.update_row(
            table, table.c.id == record.id, values=_token_row(record), missing=missing
        )

    def _first(self, condition: Any) -> TokenRecord | None:
        row = self._tx.connection.execute(select(schema.tokens).where(condition)).first()
        return None if row is None else _token(row)


def _token_row(record: TokenRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "name": record.name,
        "role": record.role,
        "secret_hash": record.secret_hash,
        "project": record.project,
        "environment": record.environment,
        "created_ms": to_millis(record.created),
        "revoked_ms": None if record.revoked is None else to_millis(record.revoked),
        "doc": _dump(record.doc),
    }


def _token(row: Row[Any]) -> TokenRecord:
    return TokenRecord(
        id=row.id,
        name=row.name,
        role=cast(Role, row.role),
        secret_hash=row.secret_hash,
        project=row.project,
        environment=row.environment,
        created=from_millis(row.created_ms),
        revoked=None if row.revoked_ms is None else from_millis(row.revoked_ms),
        doc=orjson.loads(row.doc),
    )


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
            "patch": _dump_optional(entry.patch),
            "before": _dump_optional(entry.before),
            "after": _dump_optional(entry.after),
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
        patch=_load_optional(row.patch),
        before=_load_optional(row.before),
        after=_load_optional(row.after),
    )


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
        seq: int = connection.execute(
            update(counter)
            .where(counter.c.id == 1)
            .values(seq=counter.c.seq + 1)
            .returning(counter.c.seq)
        ).scalar_one()
        connection.execute(
            insert(schema.changes).values(
                seq=seq,
                project=project,
                environment=environment,
                kind=kind,
                key=key,
                version=version,
                item=_dump_optional(item),
                at_ms=to_millis(at),
            )
        )
        return seq

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
        project=row.project,
        environment=row.environment,
        kind=cast(ChangeKind, row.kind),
        key=row.key,
        version=row.version,
        item=_load_optional(row.item),
        at=from_millis(row.at_ms),
    )


__all__: Sequence[str] = [
    "SqlAudit",
    "SqlChanges",
    "SqlEnvironments",
    "SqlFlags",
    "SqlProjects",
    "SqlSegments",
    "SqlTokens",
    "Transaction",
]
