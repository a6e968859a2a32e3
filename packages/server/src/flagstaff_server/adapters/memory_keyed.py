"""The in-memory store's keyed documents (metrics, experiments): the reference behaviour of
`services.experiment_ports.KeyedRepository`, written through the memory store's undo journal.
Keeps no references to callers' objects."""

from __future__ import annotations

import builtins
import copy
from dataclasses import replace
from typing import Protocol, TypeVar

from flagstaff_server.adapters.millis import truncate
from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.experiment_ports import KeyedRecord

K = TypeVar("K")
V = TypeVar("V")
Ident = tuple[str, str, str]


class Journal(Protocol):
    def put(self, table: dict[K, V], key: K, value: V) -> None: ...
    def remove(self, table: dict[K, V], key: K) -> None: ...


def _kept(record: KeyedRecord) -> KeyedRecord:
    return replace(copy.deepcopy(record), created=truncate(record.created))


class InMemoryKeyed:
    def __init__(self, table: dict[Ident, KeyedRecord], journal: Journal, what: str) -> None:
        self._table, self._journal, self._what = table, journal, what

    def get(self, project: str, environment: str, key: str) -> KeyedRecord | None:
        return copy.deepcopy(self._table.get((project, environment, key)))

    def add(self, record: KeyedRecord) -> None:
        ident = (record.project, record.environment, record.key)
        if ident in self._table:
            raise AlreadyExists(f"{self._what} {record.key!r} already exists", path="/key")
        self._journal.put(self._table, ident, _kept(record))

    def replace(self, record: KeyedRecord, expected_version: int) -> None:
        ident = (record.project, record.environment, record.key)
        current = self._table.get(ident)
        if current is None:
            raise NotFound(f"no {self._what} {record.key!r}")
        if current.version != expected_version:
            raise VersionConflict(
                f"{self._what} {record.key!r} is at version {current.version}, "
                f"not {expected_version}",
                path="/_version",
            )
        self._journal.put(self._table, ident, _kept(record))

    def delete(self, project: str, environment: str, key: str) -> None:
        if (project, environment, key) not in self._table:
            raise NotFound(f"no {self._what} {key!r}")
        self._journal.remove(self._table, (project, environment, key))

    def list(self, project: str, environment: str) -> list[KeyedRecord]:
        chosen = [
            r for r in self._table.values() if (r.project, r.environment) == (project, environment)
        ]
        return copy.deepcopy(sorted(chosen, key=lambda r: (r.created, r.id)))

    def everywhere(self) -> builtins.list[KeyedRecord]:
        return copy.deepcopy(sorted(self._table.values(), key=lambda r: (r.created, r.id)))
