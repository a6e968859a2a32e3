"""The SQL repository of API access tokens (found by id or by the hash of their secret).
Rows to records and back inside the unit of work's transaction; never commits."""

from __future__ import annotations

from typing import Any, cast

import orjson
from sqlalchemy import Row, bindparam, select

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import AlreadyExists
from flagstaff_server.services.ports import Role, TokenRecord

_BY_SECRET_HASH = select(schema.tokens).where(schema.tokens.c.secret_hash == bindparam("hash"))
"""Built once, as flag_repository's reads are."""


class SqlTokens:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, token_id: str) -> TokenRecord | None:
        return self._first(schema.tokens.c.id == token_id)

    def find_by_secret_hash(self, secret_hash: str) -> TokenRecord | None:
        row = self._tx.connection.execute(_BY_SECRET_HASH, {"hash": secret_hash}).first()
        return None if row is None else _token(row)

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
        "doc": dump(record.doc),
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
