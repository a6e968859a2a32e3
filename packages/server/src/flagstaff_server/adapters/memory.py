"""The in-memory store: the reference behaviour of the storage ports, used by unit tests and
whenever nothing has to survive the process. Keeps no references to callers' objects."""

from __future__ import annotations

import bisect
import copy
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from flagstaff_server.adapters.memory_approvals import InMemoryApprovalRequests
from flagstaff_server.adapters.memory_keyed import InMemoryKeyed
from flagstaff_server.adapters.memory_webhooks import (
    InMemoryDeliveries,
    InMemoryWebhooks,
    WebhookTables,
)
from flagstaff_server.adapters.millis import EPOCH, truncate
from flagstaff_server.errors import AlreadyExists, NotFound, VersionConflict
from flagstaff_server.services.approval_ports import ApprovalRequestRecord
from flagstaff_server.services.experiment_ports import KeyedRecord
from flagstaff_server.services.ports import (
    AccountRecord,
    AuditEntry,
    Change,
    ChangeKind,
    CredentialKind,
    DatabaseState,
    DatabaseTimeline,
    EnvironmentRecord,
    EpochRecord,
    FlagRecord,
    JsonObject,
    LeaseRecord,
    NoticeRecord,
    ProjectRecord,
    Replication,
    ScheduledChangeRecord,
    ScheduledChangeStatus,
    SegmentRecord,
    SessionRecord,
    Store,
    TokenRecord,
    TriggerRecord,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _stored(record: R) -> R:
    """A private copy with times cut to the millisecond, as the SQL store keeps them."""
    clone = copy.deepcopy(record)
    times = {
        f.name: truncate(value)
        for f in fields(clone)
        if isinstance(value := getattr(clone, f.name), datetime)
    }
    return replace(clone, **times) if times else clone


def _stored_environment(record: EnvironmentRecord) -> EnvironmentRecord:
    stored = _stored(record)
    return replace(stored, retired=tuple(_stored(r) for r in stored.retired))


FIRST_EPOCH = EpochRecord(
    epoch=1, started_after_seq=0, at=datetime(1970, 1, 1, tzinfo=UTC), reason="initial"
)
"""Every store begins in epoch 1 (the SQL migration records the same row)."""


@dataclass(slots=True)
class _State:
    projects: dict[str, ProjectRecord] = field(default_factory=dict)
    environments: dict[tuple[str, str], EnvironmentRecord] = field(default_factory=dict)
    flags: dict[tuple[str, str], FlagRecord] = field(default_factory=dict)
    segments: dict[tuple[str, str, str], SegmentRecord] = field(default_factory=dict)
    tokens: dict[str, TokenRecord] = field(default_factory=dict)
    audit: dict[str, AuditEntry] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    seq: int = 0
    """The last seq handed out (the change counter)."""
    epochs: list[EpochRecord] = field(default_factory=lambda: [FIRST_EPOCH])
    accounts: dict[str, AccountRecord] = field(default_factory=dict)
    sessions: dict[str, SessionRecord] = field(default_factory=dict)
    notices: dict[str, NoticeRecord] = field(default_factory=dict)
    leases: dict[str, LeaseRecord] = field(default_factory=dict)
    webhooks: WebhookTables = field(default_factory=WebhookTables)
    scheduled_changes: dict[str, ScheduledChangeRecord] = field(default_factory=dict)
    triggers: dict[str, TriggerRecord] = field(default_factory=dict)
    approval_requests: dict[str, ApprovalRequestRecord] = field(default_factory=dict)
    metrics: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    experiments: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)


class _Journal:
    """Undo steps of the open transaction, replayed backwards on rollback."""

    def __init__(self, *, read_only: bool) -> None:
        self._undo: list[Callable[[], None]] = []
        self._read_only = read_only

    def check_writable(self) -> None:
        if self._read_only:
            raise RuntimeError("write in a read-only unit of work")

    def put(self, table: dict[K, V], key: K, value: V) -> None:
        self.check_writable()
        if key in table:
            old = table[key]
            self._undo.append(lambda: table.__setitem__(key, old))
        else:
            self._undo.append(lambda: table.__delitem__(key))
        table[key] = value

    def remove(self, table: dict[K, V], key: K) -> None:
        self.check_writable()
        old = table.pop(key)
        self._undo.append(lambda: table.__setitem__(key, old))

    def append(self, log: list[V], entry: V) -> None:
        self.check_writable()
        log.append(entry)
        self._undo.append(lambda: log.__delitem__(-1))

    def set_seq(self, state: _State, seq: int) -> None:
        self.check_writable()
        old = state.seq
        self._undo.append(lambda: setattr(state, "seq", old))
        state.seq = seq

    def set_epoch(self, log: list[EpochRecord], index: int, record: EpochRecord) -> None:
        self.check_writable()
        old = log[index]
        self._undo.append(lambda: log.__setitem__(index, old))
        log[index] = record

    def rollback(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


class _Projects:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, key: str) -> ProjectRecord | None:
        found = self._state.projects.get(key)
        return copy.deepcopy(found)

    def list(self) -> list[ProjectRecord]:
        return [copy.deepcopy(p) for _, p in sorted(self._state.projects.items())]

    def add(self, record: ProjectRecord) -> None:
        if record.key in self._state.projects:
            raise AlreadyExists(f"project {record.key!r} already exists")
        self._journal.put(self._state.projects, record.key, _stored(record))

    def replace(self, record: ProjectRecord) -> None:
        if record.key not in self._state.projects:
            raise NotFound(f"project {record.key!r} not found")
        self._journal.put(self._state.projects, record.key, _stored(record))

    def delete(self, key: str) -> None:
        if key not in self._state.projects:
            raise NotFound(f"project {key!r} not found")
        state, journal = self._state, self._journal
        for env_key in [k for k in state.environments if k[0] == key]:
            _Environments(state, journal).delete(*env_key)
        for flag_key in [k for k in state.flags if k[0] == key]:
            journal.remove(state.flags, flag_key)
        state.webhooks.remove_project(key, journal)
        journal.remove(state.projects, key)


_CREDENTIAL_FIELD: dict[CredentialKind, str] = {
    "sdk": "sdk_key",
    "mobile": "mobile_key",
    "client_side": "client_side_id",
}


class _Environments:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, project: str, key: str) -> EnvironmentRecord | None:
        return copy.deepcopy(self._state.environments.get((project, key)))

    def list(self, project: str | None = None) -> list[EnvironmentRecord]:
        return [
            copy.deepcopy(env)
            for (p, _), env in sorted(self._state.environments.items())
            if project is None or p == project
        ]

    def add(self, record: EnvironmentRecord) -> None:
        if record.project not in self._state.projects:
            raise NotFound(f"project {record.project!r} not found")
        ident = (record.project, record.key)
        if ident in self._state.environments:
            raise AlreadyExists(f"environment {record.key!r} already exists")
        self._check_credentials_free(record)
        self._journal.put(self._state.environments, ident, _stored_environment(record))

    def replace(self, record: EnvironmentRecord) -> None:
        ident = (record.project, record.key)
        if ident not in self._state.environments:
            raise NotFound(f"environment {record.key!r} not found")
        self._check_credentials_free(record)
        self._journal.put(self._state.environments, ident, _stored_environment(record))

    def delete(self, project: str, key: str) -> None:
        state = self._state
        if (project, key) not in state.environments:
            raise NotFound(f"environment {key!r} not found")
        for seg_key in [k for k in state.segments if k[:2] == (project, key)]:
            self._journal.remove(state.segments, seg_key)
        self._journal.remove(state.environments, (project, key))

    def find_by_credential(
        self, kind: CredentialKind, value: str, now: datetime
    ) -> EnvironmentRecord | None:
        attribute = _CREDENTIAL_FIELD[kind]
        for env in self._state.environments.values():
            if getattr(env, attribute) == value:
                return copy.deepcopy(env)
        for env in self._state.environments.values():
            for retired in env.retired:
                if retired.kind == kind and retired.value == value and retired.expires > now:
                    return copy.deepcopy(env)
        return None

    def _check_credentials_free(self, record: EnvironmentRecord) -> None:
        ident = (record.project, record.key)
        for other_ident, other in self._state.environments.items():
            if other_ident == ident:
                continue
            for attribute in _CREDENTIAL_FIELD.values():
                if getattr(other, attribute) == getattr(record, attribute):
                    raise AlreadyExists(f"{attribute} is already used by another environment")


class _Flags:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, project: str, key: str, *, for_update: bool = False) -> FlagRecord | None:
        # units of work run one at a time here: every read is already as good as locked
        return copy.deepcopy(self._state.flags.get((project, key)))

    def list(self, project: str) -> list[FlagRecord]:
        return [
            copy.deepcopy(flag)
            for (p, _), flag in sorted(self._state.flags.items())
            if p == project
        ]

    def add(self, record: FlagRecord) -> None:
        if record.project not in self._state.projects:
            raise NotFound(f"project {record.project!r} not found")
        if (record.project, record.key) in self._state.flags:
            raise AlreadyExists(f"flag {record.key!r} already exists")
        self._journal.put(self._state.flags, (record.project, record.key), _stored(record))

    def replace(self, record: FlagRecord, expected_version: int) -> None:
        ident = (record.project, record.key)
        _check_version(self._state.flags.get(ident), f"flag {record.key!r}", expected_version)
        self._journal.put(self._state.flags, ident, _stored(record))

    def delete(self, project: str, key: str, expected_version: int | None = None) -> None:
        current = self._state.flags.get((project, key))
        _check_version(current, f"flag {key!r}", expected_version)
        self._journal.remove(self._state.flags, (project, key))


class _Segments:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(
        self, project: str, environment: str, key: str, *, for_update: bool = False
    ) -> SegmentRecord | None:
        return copy.deepcopy(self._state.segments.get((project, environment, key)))

    def list(self, project: str, environment: str) -> list[SegmentRecord]:
        return [
            copy.deepcopy(segment)
            for (p, e, _), segment in sorted(self._state.segments.items())
            if (p, e) == (project, environment)
        ]

    def add(self, record: SegmentRecord) -> None:
        if (record.project, record.environment) not in self._state.environments:
            raise NotFound(f"environment {record.environment!r} not found")
        ident = (record.project, record.environment, record.key)
        if ident in self._state.segments:
            raise AlreadyExists(f"segment {record.key!r} already exists")
        self._journal.put(self._state.segments, ident, _stored(record))

    def replace(self, record: SegmentRecord, expected_version: int) -> None:
        ident = (record.project, record.environment, record.key)
        current = self._state.segments.get(ident)
        _check_version(current, f"segment {record.key!r}", expected_version)
        self._journal.put(self._state.segments, ident, _stored(record))

    def delete(
        self, project: str, environment: str, key: str, expected_version: int | None = None
    ) -> None:
        ident = (project, environment, key)
        _check_version(self._state.segments.get(ident), f"segment {key!r}", expected_version)
        self._journal.remove(self._state.segments, ident)


def _check_version(
    current: FlagRecord | SegmentRecord | None, what: str, expected: int | None
) -> None:
    if current is None:
        raise NotFound(f"{what} not found")
    if expected is not None and current.version != expected:
        raise VersionConflict(
            f"{what} is at version {current.version}, not {expected}", path="/_version"
        )


class _Tokens:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, token_id: str) -> TokenRecord | None:
        return copy.deepcopy(self._state.tokens.get(token_id))

    def find_by_secret_hash(self, secret_hash: str) -> TokenRecord | None:
        for token in self._state.tokens.values():
            if token.secret_hash == secret_hash:
                return copy.deepcopy(token)
        return None

    def list(self) -> list[TokenRecord]:
        tokens = sorted(self._state.tokens.values(), key=lambda t: (t.created, t.id))
        return copy.deepcopy(tokens)

    def add(self, record: TokenRecord) -> None:
        if record.id in self._state.tokens:
            raise AlreadyExists(f"token {record.id!r} already exists")
        if any(t.secret_hash == record.secret_hash for t in self._state.tokens.values()):
            raise AlreadyExists("a token with this secret already exists")
        self._journal.put(self._state.tokens, record.id, _stored(record))

    def replace(self, record: TokenRecord) -> None:
        if record.id not in self._state.tokens:
            raise NotFound(f"token {record.id!r} not found")
        self._journal.put(self._state.tokens, record.id, _stored(record))


class _Audit:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def append(self, entry: AuditEntry) -> None:
        if entry.id in self._state.audit:
            raise AlreadyExists(f"audit entry {entry.id!r} already exists")
        self._journal.put(self._state.audit, entry.id, _stored(entry))

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


class _Changes:
    def __init__(self, state: _State, journal: _Journal) -> None:
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


class _Epochs:
    def __init__(self, state: _State, journal: _Journal, store: InMemoryStore) -> None:
        self._state, self._journal, self._store = state, journal, store

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
        return self._store.timeline


class _Accounts:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, account_id: str) -> AccountRecord | None:
        return copy.deepcopy(self._state.accounts.get(account_id))

    def find_by_email(self, email: str) -> AccountRecord | None:
        for account in self._state.accounts.values():
            if account.email == email:
                return copy.deepcopy(account)
        return None

    def list(self) -> list[AccountRecord]:
        return copy.deepcopy(sorted(self._state.accounts.values(), key=lambda a: a.email))

    def add(self, record: AccountRecord) -> None:
        if record.id in self._state.accounts:
            raise AlreadyExists(f"account {record.id!r} already exists")
        if any(a.email == record.email for a in self._state.accounts.values()):
            raise AlreadyExists(f"an account for {record.email!r} already exists")
        self._journal.put(self._state.accounts, record.id, _stored(record))

    def replace(self, record: AccountRecord) -> None:
        if record.id not in self._state.accounts:
            raise NotFound(f"account {record.id!r} not found")
        self._journal.put(self._state.accounts, record.id, _stored(record))

    def delete(self, account_id: str) -> None:
        if account_id not in self._state.accounts:
            raise NotFound(f"account {account_id!r} not found")
        self._journal.remove(self._state.accounts, account_id)


class _Sessions:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, id_hash: str) -> SessionRecord | None:
        return copy.deepcopy(self._state.sessions.get(id_hash))

    def add(self, record: SessionRecord) -> None:
        if record.id_hash in self._state.sessions:
            raise AlreadyExists("session already exists")
        self._journal.put(self._state.sessions, record.id_hash, _stored(record))

    def delete(self, id_hash: str) -> None:
        if id_hash in self._state.sessions:
            self._journal.remove(self._state.sessions, id_hash)

    def delete_subject(self, subject: str) -> None:
        for id_hash, session in list(self._state.sessions.items()):
            if session.subject == subject:
                self._journal.remove(self._state.sessions, id_hash)

    def delete_expired(self, now: datetime) -> None:
        for id_hash, session in list(self._state.sessions.items()):
            if session.expires <= now:
                self._journal.remove(self._state.sessions, id_hash)


class _Notices:
    def __init__(self, state: _State, journal: _Journal) -> None:
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
        self._journal.put(self._state.notices, record.id, _stored(record))

    def delete(self, notice_id: str) -> None:
        if notice_id not in self._state.notices:
            raise NotFound(f"no notice {notice_id!r}")
        self._journal.remove(self._state.notices, notice_id)


class _Leases:
    """Units of work run one at a time here, so taking a lease never races another taker."""

    def __init__(self, state: _State, journal: _Journal) -> None:
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
        self._journal.put(self._state.leases, name, _stored(record))
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


class _ScheduledChanges:
    def __init__(self, state: _State, journal: _Journal) -> None:
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
        self._journal.put(self._state.scheduled_changes, record.id, _stored(record))

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
        self._journal.put(self._state.scheduled_changes, record.id, _stored(record))

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


class _Triggers:
    def __init__(self, state: _State, journal: _Journal) -> None:
        self._state, self._journal = state, journal

    def get(self, trigger_id: str) -> TriggerRecord | None:
        return copy.deepcopy(self._state.triggers.get(trigger_id))

    def add(self, record: TriggerRecord) -> None:
        if record.id in self._state.triggers:
            raise AlreadyExists(f"trigger {record.id!r} already exists")
        self._journal.put(self._state.triggers, record.id, _stored(record))

    def replace(self, record: TriggerRecord, expected_version: int) -> None:
        current = self._state.triggers.get(record.id)
        if current is None:
            raise NotFound(f"trigger {record.id!r} not found")
        if current.version != expected_version:
            raise VersionConflict(
                f"trigger {record.id!r} is at version {current.version}, not {expected_version}",
                path="/_version",
            )
        self._journal.put(self._state.triggers, record.id, _stored(record))

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


class InMemoryUnitOfWork:
    def __init__(self, state: _State, journal: _Journal, store: InMemoryStore) -> None:
        self.projects = _Projects(state, journal)
        self.environments = _Environments(state, journal)
        self.flags = _Flags(state, journal)
        self.segments = _Segments(state, journal)
        self.tokens = _Tokens(state, journal)
        self.audit = _Audit(state, journal)
        self.changes = _Changes(state, journal)
        self.accounts = _Accounts(state, journal)
        self.sessions = _Sessions(state, journal)
        self.epochs = _Epochs(state, journal, store)
        self.notices = _Notices(state, journal)
        self.leases = _Leases(state, journal)
        self.webhooks = InMemoryWebhooks(state.webhooks, journal)
        self.deliveries = InMemoryDeliveries(state.webhooks, journal)
        self.scheduled_changes = _ScheduledChanges(state, journal)
        self.triggers = _Triggers(state, journal)
        self.approval_requests = InMemoryApprovalRequests(state.approval_requests, journal)
        self.metrics = InMemoryKeyed(state.metrics, journal, "metric")
        self.experiments = InMemoryKeyed(state.experiments, journal, "experiment")


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
        self._state = _State()
        self._lock = threading.RLock()
        self.timeline = timeline
        """What `uow.epochs.timeline()` reports: None (no timelines, like SQLite), or set by a
        test to act as a PostgreSQL primary, and changed to act out a promotion."""
        self.replication = InMemoryReplication(self)

    @contextmanager
    def unit_of_work(self, *, read_only: bool = False) -> Iterator[InMemoryUnitOfWork]:
        with self._lock:
            journal = _Journal(read_only=read_only)
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
