"""The in-memory store: the reference behaviour of the storage ports, used by unit tests and
whenever nothing has to survive the process. Keeps no references to callers' objects. The
store, its unit of work and its replication live here; the tables are in `memory_state`, the
undo journal in `memory_journal`, and each aggregate's repository in `memory_catalog`,
`memory_identity`, `memory_history`, `memory_operations`, `memory_workflows`,
`memory_webhooks`, `memory_approvals` and `memory_keyed`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from flagstaff_server.adapters.memory_approvals import InMemoryApprovalRequests
from flagstaff_server.adapters.memory_catalog import (
    InMemoryEnvironments,
    InMemoryFlags,
    InMemoryProjects,
    InMemorySegments,
)
from flagstaff_server.adapters.memory_history import InMemoryAudit, InMemoryChanges, InMemoryEpochs
from flagstaff_server.adapters.memory_identity import (
    InMemoryAccounts,
    InMemorySessions,
    InMemoryTokens,
)
from flagstaff_server.adapters.memory_journal import UndoJournal
from flagstaff_server.adapters.memory_keyed import InMemoryKeyed
from flagstaff_server.adapters.memory_operations import InMemoryLeases, InMemoryNotices
from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.adapters.memory_webhooks import InMemoryDeliveries, InMemoryWebhooks
from flagstaff_server.adapters.memory_workflows import InMemoryScheduledChanges, InMemoryTriggers
from flagstaff_server.services.ports import DatabaseState, DatabaseTimeline, Replication, Store


class InMemoryUnitOfWork:
    def __init__(self, state: MemoryState, journal: UndoJournal, store: InMemoryStore) -> None:
        self.projects = InMemoryProjects(state, journal)
        self.environments = InMemoryEnvironments(state, journal)
        self.flags = InMemoryFlags(state, journal)
        self.segments = InMemorySegments(state, journal)
        self.tokens = InMemoryTokens(state, journal)
        self.audit = InMemoryAudit(state, journal)
        self.changes = InMemoryChanges(state, journal)
        self.accounts = InMemoryAccounts(state, journal)
        self.sessions = InMemorySessions(state, journal)
        self.epochs = InMemoryEpochs(state, journal, lambda: store.timeline)
        self.notices = InMemoryNotices(state, journal)
        self.leases = InMemoryLeases(state, journal)
        self.webhooks = InMemoryWebhooks(state.webhooks, journal)
        self.deliveries = InMemoryDeliveries(state.webhooks, journal)
        self.scheduled_changes = InMemoryScheduledChanges(state, journal)
        self.triggers = InMemoryTriggers(state, journal)
        self.approval_requests = InMemoryApprovalRequests(state.approval_requests, journal)
        self.metrics = InMemoryKeyed(state.metrics, journal, "metric")
        self.experiments = InMemoryKeyed(state.experiments, journal, "experiment")
        self.custom_roles = InMemoryKeyed(state.custom_roles, journal, "custom role")
        self.teams = InMemoryKeyed(state.teams, journal, "team")
        self.code_ref_repositories = InMemoryKeyed(
            state.code_ref_repositories, journal, "repository"
        )
        self.code_ref_branches = InMemoryKeyed(state.code_ref_branches, journal, "branch")
        self.code_ref_extinctions = InMemoryKeyed(state.code_ref_extinctions, journal, "extinction")
        self.releases = InMemoryKeyed(state.releases, journal, "automated release")
        self.sso = InMemoryKeyed(state.sso, journal, "single sign-on record")


class InMemoryReplication:
    """An in-memory database has no replicas: it is "embedded" and cannot be promoted."""

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self._primary_region: str | None = None

    def state(self) -> DatabaseState:
        with self._store.unit_of_work(read_only=True) as uow:
            epoch = uow.epochs.current().epoch
        return DatabaseState(role="embedded", epoch=epoch, primary_region=self._primary_region)

    def promote(self, wait_seconds: float) -> bool:
        return False

    def record_primary_region(self, region: str, *, timeline: int | None, at: datetime) -> None:
        self._primary_region = region


class InMemoryStore:
    """Transactions run one at a time under a lock; a rollback replays the undo journal."""

    def __init__(self, timeline: DatabaseTimeline | None = None) -> None:
        self._state = MemoryState()
        self._lock = threading.RLock()
        self.timeline = timeline
        """What `uow.epochs.timeline()` reports: None (no timelines, like SQLite), or set by a
        test to act as a PostgreSQL primary, and changed to act out a promotion."""
        self.replication = InMemoryReplication(self)

    @contextmanager
    def unit_of_work(self, *, read_only: bool = False) -> Iterator[InMemoryUnitOfWork]:
        with self._lock:
            journal = UndoJournal(read_only=read_only)
            try:
                yield InMemoryUnitOfWork(self._state, journal, self)
            except BaseException:
                journal.rollback()
                raise

    def ping(self) -> None:
        return None

    def close(self) -> None:
        return None


if TYPE_CHECKING:
    _conforms: type[Store] = InMemoryStore
    _replicates: type[Replication] = InMemoryReplication
