"""The in-memory store's history: the audit trail, the change outbox with its counter, and the
epochs that number it. Keeps no references to callers' objects."""

from __future__ import annotations

import bisect
import copy
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from flagstaff_server.adapters.memory_journal import UndoJournal, stored
from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.adapters.millis import truncate
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import (
    AuditEntry,
    Change,
    ChangeKind,
    DatabaseTimeline,
    EpochRecord,
    JsonObject,
)


class InMemoryAudit:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def append(self, entry: AuditEntry) -> None:
        if entry.id in self._state.audit:
            raise AlreadyExists(f"audit entry {entry.id!r} already exists")
        self._journal.put(self._state.audit, entry.id, stored(entry))

    def get(self, entry_id: str) -> AuditEntry | None:
        return copy.deepcopy(self._state.audit.get(entry_id))

    def list(
        self,
        *,
        resource_prefix: str | None = None,
        kind: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        # dict order is append order: the tie-breaker for entries of the same millisecond
        chosen = [
            (entry, position)
            for position, entry in enumerate(self._state.audit.values())
            if (resource_prefix is None or entry.resource.startswith(resource_prefix))
            and (kind is None or entry.kind == kind)
            and (since is None or entry.at >= truncate(since))
            and (until is None or entry.at < truncate(until))
        ]
        chosen.sort(key=lambda pair: (pair[0].at, pair[1]), reverse=True)
        return copy.deepcopy([entry for entry, _ in chosen[: max(limit, 0)]])


class InMemoryChanges:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

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
        seq = self._state.seq + 1
        change = Change(
            seq=seq,
            epoch=self._state.epochs[-1].epoch,
            project=project,
            environment=environment,
            kind=kind,
            key=key,
            version=version,
            item=copy.deepcopy(item),
            at=truncate(at),
        )
        self._journal.append(self._state.changes, change)
        self._journal.set_seq(self._state, seq)
        return seq

    def since(self, after_seq: int, limit: int = 1000) -> list[Change]:
        changes = self._state.changes
        start = bisect.bisect_right(changes, after_seq, key=lambda change: change.seq)
        return copy.deepcopy(changes[start : start + max(limit, 0)])

    def latest_seq(self) -> int:
        return self._state.seq


class InMemoryEpochs:
    def __init__(
        self,
        state: MemoryState,
        journal: UndoJournal,
        timeline: Callable[[], DatabaseTimeline | None],
    ) -> None:
        self._state, self._journal, self._timeline = state, journal, timeline

    def list(self) -> list[EpochRecord]:
        return list(self._state.epochs)

    def current(self) -> EpochRecord:
        return self._state.epochs[-1]

    def begin(
        self,
        *,
        reason: str,
        timeline: int | None,
        system_id: str | None,
        at: datetime,
        seq_gap: int,
    ) -> EpochRecord:
        state = self._state
        record = EpochRecord(
            epoch=state.epochs[-1].epoch + 1,
            started_after_seq=state.seq,
            timeline=timeline,
            system_id=system_id,
            at=truncate(at),
            reason=reason,
        )
        self._journal.append(state.epochs, record)
        self._journal.set_seq(state, state.seq + seq_gap)
        return record

    def lock(self) -> None:
        """Units of work already run one at a time here."""
        self._journal.check_writable()

    def record_timeline(self, epoch: int, timeline: int, system_id: str | None) -> None:
        for index, record in enumerate(self._state.epochs):
            if record.epoch == epoch:
                updated = replace(record, timeline=timeline, system_id=system_id)
                self._journal.set_epoch(self._state.epochs, index, updated)
                return
        raise NotFound(f"epoch {epoch} not found")

    def timeline(self) -> DatabaseTimeline | None:
        return self._timeline()
