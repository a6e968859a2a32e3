"""SQL repositories for local accounts and browser sessions: rows to records and back inside the
unit of work's transaction. They never commit; driver errors go to the store to translate."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any, cast

import orjson
from sqlalchemy import Row, delete, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import AlreadyExists
from flagstaff_server.services.ports import AccountRecord, Role, SessionRecord


class SqlAccounts:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, account_id: str) -> AccountRecord | None:
        return self._first(schema.accounts.c.id == account_id)

    def find_by_email(self, email: str) -> AccountRecord | None:
        return self._first(schema.accounts.c.email == email)

    def list(self) -> builtins.list[AccountRecord]:
        table = schema.accounts
        rows = self._tx.connection.execute(select(table).order_by(table.c.email))
        return [_account(row) for row in rows]

    def add(self, record: AccountRecord) -> None:
        self._tx.writable()  # a read-only unit of work refuses before it reads
        if self.get(record.id) is not None:
            raise AlreadyExists(f"account {record.id!r} already exists")
        taken = f"an account for {record.email!r} already exists"
        if self.find_by_email(record.email) is not None:
            raise AlreadyExists(taken)
        self._tx.insert_row(schema.accounts, _account_row(record), taken=taken)

    def replace(self, record: AccountRecord) -> None:
        table = schema.accounts
        missing = f"account {record.id!r} not found"
        self._tx.update_row(
            table, table.c.id == record.id, values=_account_row(record), missing=missing
        )

    def delete(self, account_id: str) -> None:
        table = schema.accounts
        missing = f"account {account_id!r} not found"
        self._tx.delete_row(table, table.c.id == account_id, missing=missing)

    def _first(self, condition: Any) -> AccountRecord | None:
        row = self._tx.connection.execute(select(schema.accounts).where(condition)).first()
        return None if row is None else _account(row)


def _account_row(record: AccountRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "email": record.email,
        "role": record.role,
        "password_hash": record.password_hash,
        "created_ms": to_millis(record.created),
        "doc": orjson.dumps(record.doc).decode(),
    }


def _account(row: Row[Any]) -> AccountRecord:
    return AccountRecord(
        id=row.id,
        email=row.email,
        role=cast(Role, row.role),
        password_hash=row.password_hash,
        created=from_millis(row.created_ms),
        doc=orjson.loads(row.doc),
    )


class SqlSessions:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, id_hash: str) -> SessionRecord | None:
        table = schema.sessions
        row = self._tx.connection.execute(select(table).where(table.c.id_hash == id_hash)).first()
        if row is None:
            return None
        return SessionRecord(
            id_hash=row.id_hash,
            subject=row.subject,
            csrf_token=row.csrf_token,
            created=from_millis(row.created_ms),
            expires=from_millis(row.expires_ms),
        )

    def add(self, record: SessionRecord) -> None:
        row = {
            "id_hash": record.id_hash,
            "subject": record.subject,
            "csrf_token": record.csrf_token,
            "created_ms": to_millis(record.created),
            "expires_ms": to_millis(record.expires),
        }
        self._tx.insert_row(schema.sessions, row, taken="session already exists")

    def delete(self, id_hash: str) -> None:
        table = schema.sessions
        self._tx.writable().execute(delete(table).where(table.c.id_hash == id_hash))

    def delete_subject(self, subject: str) -> None:
        table = schema.sessions
        self._tx.writable().execute(delete(table).where(table.c.subject == subject))

    def delete_expired(self, now: datetime) -> None:
        table = schema.sessions
        self._tx.writable().execute(delete(table).where(table.c.expires_ms <= to_millis(now)))
