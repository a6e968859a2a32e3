"""Throwaway PostgreSQL databases of the contract suite (the store kinds and opening a store of
each are support/stores.py's). Fixtures built on these are in conftest.py; test modules import
from here (conftest module names collide)."""

from __future__ import annotations

import secrets
from typing import Any

import psycopg


class PostgresServer:
    """Creates and drops throwaway databases on the test PostgreSQL server."""

    def __init__(self, admin: psycopg.Connection[Any]) -> None:
        self._admin = admin
        self._created: list[str] = []

    def create_database(self, url: str | None = None) -> str:
        """Create a new database (named by `url`, or a random name) and return its URL."""
        name = url.rsplit("/", 1)[1] if url else f"flagstaff_test_{secrets.token_hex(6)}"
        self._admin.execute(f'CREATE DATABASE "{name}"')
        if name not in self._created:
            self._created.append(name)
        info = self._admin.info
        return f"postgresql://{info.user}@{info.host}:{info.port}/{name}"

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self._admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def drop_all(self) -> None:
        for name in self._created:
            self._admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
