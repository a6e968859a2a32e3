"""The in-memory store's scheduled changes and flag triggers. Keeps no references to callers'
objects."""

from __future__ import annotations

import copy
from datetime import datetime

from flagstaff_server.adapters.memory_journal import UndoJournal, stored
from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.adapters.millis import truncate
from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.ports import (
    ScheduledChangeRecord,
    ScheduledChangeStatus,
    TriggerRecord,
)


class InMemoryScheduledChanges:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, change_id: str) -> ScheduledChangeRecord | None:
        return copy.deepcopy(self._state.scheduled_changes.get(change_id))

    def _due(self, now: datetime) -> list[ScheduledChangeRecord]:
        due = [
            change
            for change in self._state.scheduled_changes.values()
            if change.status == "pending" and change.execution <= truncate(now)
        ]
        return sorted(due, key=lambda change: (change.execution, change.id))

    def due(self, now: datetime, limit: int) -> list[ScheduledChangeRecord]:
        return copy.deepcopy(self._due(now)[: max(limit, 0)])

    def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        due = self._due(now)
        return len(due), (due[0].execution if due else None)

    def claim(self, change_id: str) -> ScheduledChangeRecord | None:
        self._journal.check_writable()
        found = self._state.scheduled_changes.get(change_id)
        return copy.deepcopy(found) if found is not None and found.status == "pending" else None

    def add(self, record: ScheduledChangeRecord) -> None:
        if record.id in self._state.scheduled_changes:
            raise AlreadyExists(f"scheduled change {record.id!r} already exists")
        self._journal.put(self._state.scheduled_changes, record.id, stored(record))

    def replace(self, record: ScheduledChangeRecord, expected_version: int) -> None:
        current = self._state.scheduled_changes.get(record.id)
        if current is None:
            raise NotFound(f"scheduled change {record.id!r} not found")
        if current.version != expected_version:
            raise VersionConflict(
                f"scheduled change {record.id!r} is at version {current.version}, "
                f"not {expected_version}",
                path="/_version",
            )
        self._journal.put(self._state.scheduled_changes, record.id, stored(record))

    def delete(self, change_id: str) -> None:
        if change_id not in self._state.scheduled_changes:
            raise NotFound(f"no scheduled change {change_id!r}")
        self._journal.remove(self._state.scheduled_changes, change_id)

    def delete_pending(self, project: str, flag: str) -> int:
        doomed = [
            change.id
            for change in self._state.scheduled_changes.values()
            if (change.project, change.flag, change.status) == (project, flag, "pending")
        ]
        for change_id in doomed:
            self._journal.remove(self._state.scheduled_changes, change_id)
        return len(doomed)

    def list(
        self,
        project: str,
        flag: str,
        *,
        environment: str | None = None,
        status: ScheduledChangeStatus | None = "pending",
    ) -> list[ScheduledChangeRecord]:
        chosen = [
            change
            for change in self._state.scheduled_changes.values()
            if (change.project, change.flag) == (project, flag)
            and (environment is None or change.environment == environment)
            and (status is None or change.status == status)
        ]
        return copy.deepcopy(sorted(chosen, key=lambda change: (change.execution, change.id)))


class InMemoryTriggers:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, trigger_id: str) -> TriggerRecord | None:
        return copy.deepcopy(self._state.triggers.get(trigger_id))

    def add(self, record: TriggerRecord) -> None:
        if record.id in self._state.triggers:
            raise AlreadyExists(f"trigger {record.id!r} already exists")
        self._journal.put(self._state.triggers, record.id, stored(record))

    def replace(self, record: TriggerRecord, expected_version: int) -> None:
        current = self._state.triggers.get(record.id)
        if current is None:
            raise NotFound(f"trigger {record.id!r} not found")
        if current.version != expected_version:
            raise VersionConflict(
                f"trigger {record.id!r} is at version {current.version}, not {expected_version}",
                path="/_version",
            )
        self._journal.put(self._state.triggers, record.id, stored(record))

    def delete(self, trigger_id: str) -> None:
        if trigger_id not in self._state.triggers:
            raise NotFound(f"no trigger {trigger_id!r}")
        self._journal.remove(self._state.triggers, trigger_id)

    def delete_for_flag(self, project: str, flag: str) -> int:
        doomed = [
            t.id for t in self._state.triggers.values() if (t.project, t.flag) == (project, flag)
        ]
        for trigger_id in doomed:
            self._journal.remove(self._state.triggers, trigger_id)
        return len(doomed)

    def list(self, project: str, flag: str, environment: str) -> list[TriggerRecord]:
        chosen = [
            t
            for t in self._state.triggers.values()
            if (t.project, t.flag, t.environment) == (project, flag, environment)
        ]
        return copy.deepcopy(sorted(chosen, key=lambda t: (t.created, t.id)))
