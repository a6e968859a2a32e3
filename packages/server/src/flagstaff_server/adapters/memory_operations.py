"""The in-memory store's operator notices and the worker's leases. Keeps no references to
callers' objects."""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import datetime

from flagstaff_server.adapters.memory_journal import UndoJournal, stored
from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.adapters.millis import EPOCH, truncate
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import LeaseRecord, NoticeRecord


class InMemoryNotices:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, notice_id: str) -> NoticeRecord | None:
        return copy.deepcopy(self._state.notices.get(notice_id))

    def list(self) -> list[NoticeRecord]:
        # newest first; the id breaks ties as the SQL store's ORDER BY does
        by_id = sorted(self._state.notices.values(), key=lambda n: n.id)
        return copy.deepcopy(sorted(by_id, key=lambda n: n.created, reverse=True))

    def add(self, record: NoticeRecord) -> None:
        if record.id in self._state.notices:
            raise AlreadyExists(f"notice {record.id!r} already exists")
        self._journal.put(self._state.notices, record.id, stored(record))

    def delete(self, notice_id: str) -> None:
        if notice_id not in self._state.notices:
            raise NotFound(f"no notice {notice_id!r}")
        self._journal.remove(self._state.notices, notice_id)


class InMemoryLeases:
    """Units of work run one at a time here, so taking a lease never races another taker."""

    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def acquire(
        self, name: str, holder: str, *, now: datetime, until: datetime
    ) -> LeaseRecord | None:
        current = self._state.leases.get(name)
        if current is not None and current.holder != holder and current.expires > truncate(now):
            return None
        if current is not None and current.holder == holder and current.expires > truncate(now):
            record = replace(current, expires=until)
        else:
            fence = 1 if current is None else current.fence + 1
            record = LeaseRecord(name=name, holder=holder, expires=until, fence=fence, acquired=now)
        self._journal.put(self._state.leases, name, stored(record))
        return copy.deepcopy(self._state.leases[name])

    def holds(self, name: str, holder: str, fence: int, now: datetime) -> bool:
        current = self._state.leases.get(name)
        return (
            current is not None
            and current.holder == holder
            and current.fence == fence
            and current.expires > truncate(now)
        )

    def release(self, name: str, holder: str) -> None:
        current = self._state.leases.get(name)
        if current is not None and current.holder == holder:
            self._journal.put(self._state.leases, name, replace(current, expires=EPOCH))

    def list(self) -> list[LeaseRecord]:
        return [copy.deepcopy(lease) for _, lease in sorted(self._state.leases.items())]
