"""The in-memory store's approval requests: the reference behaviour of
`services.approval_ports`, kept in a dict of the memory store's state and written through its
undo journal. Keeps no references to callers' objects."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Protocol, TypeVar

from flagstaff_server.adapters.millis import truncate
from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.approval_ports import ApprovalRequestRecord, ApprovalResourceKind

K = TypeVar("K")
V = TypeVar("V")


class Journal(Protocol):
    """What this table needs of the memory store's undo journal."""

    def put(self, table: dict[K, V], key: K, value: V) -> None: ...
    def remove(self, table: dict[K, V], key: K) -> None: ...


class InMemoryApprovalRequests:
    def __init__(self, table: dict[str, ApprovalRequestRecord], journal: Journal) -> None:
        self._table, self._journal = table, journal

    def get(self, request_id: str) -> ApprovalRequestRecord | None:
        return copy.deepcopy(self._table.get(request_id))

    def add(self, record: ApprovalRequestRecord) -> None:
        if record.id in self._table:
            raise AlreadyExists(f"approval request {record.id!r} already exists")
        self._journal.put(self._table, record.id, _stored(record))

    def replace(self, record: ApprovalRequestRecord, expected_version: int) -> None:
        current = self._table.get(record.id)
        if current is None:
            raise NotFound(f"approval request {record.id!r} not found")
        if current.version != expected_version:
            raise VersionConflict(
                f"approval request {record.id!r} is at version {current.version}, "
                f"not {expected_version}",
                path="/_version",
            )
        self._journal.put(self._table, record.id, _stored(record))

    def delete(self, request_id: str) -> None:
        if request_id not in self._table:
            raise NotFound(f"no approval request {request_id!r}")
        self._journal.remove(self._table, request_id)

    def delete_pending(self, project: str, kind: ApprovalResourceKind, key: str) -> int:
        doomed = [
            found.id
            for found in self._table.values()
            if (found.project, found.kind, found.key, found.status)
            == (project, kind, key, "pending")
        ]
        for request_id in doomed:
            self._journal.remove(self._table, request_id)
        return len(doomed)

    def list(
        self,
        *,
        project: str | None = None,
        kind: ApprovalResourceKind | None = None,
        key: str | None = None,
        environment: str | None = None,
    ) -> list[ApprovalRequestRecord]:
        wanted = {"project": project, "kind": kind, "key": key, "environment": environment}
        chosen = [
            found
            for found in self._table.values()
            if all(value is None or getattr(found, name) == value for name, value in wanted.items())
        ]
        chosen.sort(key=lambda found: found.id)
        chosen.sort(key=lambda found: found.created, reverse=True)
        return copy.deepcopy(chosen)


def _stored(record: ApprovalRequestRecord) -> ApprovalRequestRecord:
    """A private copy with its time cut to the millisecond, as the SQL store keeps it."""
    clone = copy.deepcopy(record)
    return replace(clone, created=truncate(clone.created))
