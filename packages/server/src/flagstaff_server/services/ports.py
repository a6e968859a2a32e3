"""Storage and change-feed ports: the records the control plane keeps and the Protocols adapters
implement. Pure declarations; no I/O, no clock and no adapter code belongs here.

Errors (from `flagstaff_server.errors`): `add` raises `AlreadyExists`, `replace`/`delete` raise
`NotFound` for a missing row and `VersionConflict` when `expected_version` is not current; any
driver failure surfaces as `StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from flagstaff_server.services.approval_ports import ApprovalRequestRepository
from flagstaff_server.services.experiment_ports import KeyedRepository
from flagstaff_server.services.webhook_ports import DeliveryRepository, WebhookRepository

JsonObject = dict[str, Any]
"""A parsed JSON object. Repositories hand out copies: mutating one never changes the store."""

Clock = Callable[[], datetime]
"""Where time comes from: returns an aware UTC datetime. Injected by the composition root."""

CredentialKind = Literal["sdk", "mobile", "client_side"]
DatabaseRole = Literal["primary", "standby", "embedded"]
"""A PostgreSQL server writing (primary) or replaying one (hot standby); SQLite or memory:
embedded, with no replication at all."""
ChangeKind = Literal["flag", "segment", "environment", "epoch", "notice"]
Role = Literal["reader", "writer", "admin"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRecord:
    key: str
    name: str
    tags: tuple[str, ...] = ()
    doc: JsonObject
    """Every other REST field of the project (description, defaultClientSideAvailability, ...)."""
    created: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class RetiredCredential:
    """A key replaced by a reset, still accepted until `expires` (the grace period)."""

    kind: CredentialKind
    value: str
    expires: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentRecord:
    project: str
    key: str
    name: str
    sdk_key: str
    mobile_key: str
    client_side_id: str
    """24 lowercase hex digits; the REST `_id`."""
    retired: tuple[RetiredCredential, ...] = ()
    secure_mode: bool = False
    doc: JsonObject
    """Every other REST field (color, defaultTtl, tags, confirmChanges, ...)."""
    created: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagRecord:
    """One flag of a project as its REST document, per-environment configurations included."""

    project: str
    key: str
    version: int
    """The REST `_version`; the compare-and-set token."""
    doc: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentRecord:
    project: str
    environment: str
    key: str
    version: int
    doc: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRecord:
    id: str
    name: str
    role: Role
    secret_hash: str
    """A hash of the secret (the secret itself is never stored)."""
    project: str | None = None
    environment: str | None = None
    created: datetime
    revoked: datetime | None = None
    doc: JsonObject
    """Extra REST fields (description, hint of the secret, lastUsed, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountRecord:
    """A local (web UI) user account. Holds the same roles as access tokens."""

    id: str
    email: str
    """Lowercase; unique."""
    role: Role
    password_hash: str
    """A self-describing slow hash with its salt (`scrypt$n$r$p$salt$hash`), never the password."""
    created: datetime
    doc: JsonObject
    """Extra fields (display name, who created it, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRecord:
    """A signed-in browser session. The cookie holds a random id; only its hash is stored."""

    id_hash: str
    subject: str
    """Who is signed in: `account:<id>`, or `token:<id>` for a sign-in with an access token."""
    csrf_token: str
    """Sent back by the browser in a header on every write: a cross-site page cannot read it."""
    created: datetime
    expires: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    id: str
    at: datetime
    actor: str
    kind: str
    """The resource kind: "project", "environment", "flag", "segment", "token"."""
    resource: str
    """LaunchDarkly-style resource path, e.g. `proj/p:env/e:flag/k`."""
    action: str
    comment: str | None = None
    patch: Any = None
    """The JSON Patch or semantic patch as received (parsed JSON), if any."""
    before: JsonObject | None = None
    after: JsonObject | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One committed change, in the outbox and on the feed. `item` is the SDK-format JSON of the
    flag or segment for `environment` (for kind "environment": its delivery view, credentials
    included); None means deleted. Kind "epoch" marks the start of epoch `epoch` (project and
    environment empty, `item` the epoch's description: see `services.epochs`). Kind "notice"
    carries an operator notice (project and environment empty, `key` its id, `item` its public
    JSON: `flagstaff_server.notice`; None means deleted)."""

    seq: int
    project: str
    environment: str
    kind: ChangeKind
    key: str
    version: int
    item: JsonObject | None
    at: datetime
    epoch: int = 1
    """The database epoch the change was committed in; (epoch, seq) is a feed position."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EpochRecord:
    """One epoch of the database's history: a stretch in which seqs and versions were handed out
    by one primary (docs/storage.md, "Epochs"). Epoch 1 starts after seq 0."""

    epoch: int
    started_after_seq: int
    """The counter's seq when the epoch began: changes of earlier epochs are at or below it."""
    timeline: int | None = None
    """The PostgreSQL timeline the epoch began on (None: SQLite, or not known)."""
    system_id: str | None = None
    """The PostgreSQL cluster's system identifier (None: SQLite, or not readable)."""
    at: datetime
    reason: str
    """Why it began: "initial", "promote", "restore", "timeline", or an operator's word."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NoticeRecord:
    """An operator notice posted through the API (`flagstaff_server.notice`)."""

    id: str
    created: datetime
    expires: datetime | None = None
    doc: JsonObject
    """Its other fields: title, message, severity, regions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseRecord:
    """Who runs the worker job `name` now: `holder` until `expires`. `fence` grows by one each
    time the lease changes hands, so work begun under an older holding is told from the current
    one's (docs/workflows.md, "The worker")."""

    name: str
    holder: str
    expires: datetime
    fence: int
    acquired: datetime
    """When `holder` took it (renewals keep this)."""


ScheduledChangeStatus = Literal["pending", "executed", "failed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduledChangeRecord:
    """Semantic-patch instructions to apply to a flag's environment at `execution`
    (docs/workflows.md, "Scheduled changes"). Pending until the worker applies them once
    ("executed") or finds they no longer apply ("failed"); `version` is the compare-and-set
    token of edits and of that transition."""

    id: str
    project: str
    flag: str
    environment: str
    execution: datetime
    status: ScheduledChangeStatus = "pending"
    version: int = 1
    created: datetime
    doc: JsonObject
    """Everything else: instructions, comment, who scheduled it (and with which access), and once
    run, when, how late and what came of it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerRecord:
    """A flag trigger: a URL that turns the flag on or off in one environment when called
    (docs/workflows.md, "Flag triggers"). Only a hash of the URL's secret is kept."""

    id: str
    project: str
    flag: str
    environment: str
    secret_hash: str
    enabled: bool = True
    version: int = 1
    created: datetime
    doc: JsonObject
    """Its integration, instruction, comment, author, and the record of its calls."""


@dataclass(frozen=True, slots=True)
class DatabaseTimeline:
    """Which history a PostgreSQL primary is writing: its timeline and cluster identity."""

    timeline: int
    system_id: str | None


ChangeRecord = Change


class ProjectRepository(Protocol):
    def get(self, key: str) -> ProjectRecord | None: ...
    def list(self) -> list[ProjectRecord]:
        """All projects, ordered by key."""
        ...

    def add(self, record: ProjectRecord) -> None: ...
    def replace(self, record: ProjectRecord) -> None: ...
    def delete(self, key: str) -> None:
        """Remove the project with its environments, flags, segments and chat integrations (not
        audit or changes)."""
        ...


class EnvironmentRepository(Protocol):
    def get(self, project: str, key: str) -> EnvironmentRecord | None: ...
    def list(self, project: str | None = None) -> list[EnvironmentRecord]:
        """Environments of `project` (of every project when None), ordered by project, key."""
        ...

    def add(self, record: EnvironmentRecord) -> None:
        """Raises `NotFound` when the project is missing, `AlreadyExists` for a taken key or
        a credential already in use."""
        ...

    def replace(self, record: EnvironmentRecord) -> None: ...
    def delete(self, project: str, key: str) -> None:
        """Remove the environment and its segments."""
        ...

    def find_by_credential(
        self, kind: CredentialKind, value: str, now: datetime
    ) -> EnvironmentRecord | None:
        """The environment whose current key of `kind` is `value`, or whose retired key of that
        kind is `value` and expires after `now`."""
        ...


class FlagRepository(Protocol):
    def get(self, project: str, key: str, *, for_update: bool = False) -> FlagRecord | None:
        """`for_update=True` in a writing unit of work holds the row until commit, so a
        read-modify-write cannot lose a race: a concurrent writer waits, then reads this
        one's result (PostgreSQL `SELECT ... FOR UPDATE`; SQLite and memory already run
        writers one at a time)."""
        ...

    def list(self, project: str) -> list[FlagRecord]:
        """Flags of the project, ordered by key."""
        ...

    def add(self, record: FlagRecord) -> None: ...
    def replace(self, record: FlagRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`; otherwise raise
        `VersionConflict` and change nothing."""
        ...

    def delete(self, project: str, key: str, expected_version: int | None = None) -> None: ...


class SegmentRepository(Protocol):
    def get(
        self, project: str, environment: str, key: str, *, for_update: bool = False
    ) -> SegmentRecord | None:
        """`for_update` as for flags."""
        ...

    def list(self, project: str, environment: str) -> list[SegmentRecord]:
        """Segments of the environment, ordered by key."""
        ...

    def add(self, record: SegmentRecord) -> None: ...
    def replace(self, record: SegmentRecord, expected_version: int) -> None: ...
    def delete(
        self, project: str, environment: str, key: str, expected_version: int | None = None
    ) -> None: ...


class TokenRepository(Protocol):
    def get(self, token_id: str) -> TokenRecord | None: ...
    def find_by_secret_hash(self, secret_hash: str) -> TokenRecord | None:
        """The token with this hash, revoked or not (the caller checks `revoked`)."""
        ...

    def list(self) -> list[TokenRecord]:
        """All tokens, ordered by creation time then id."""
        ...

    def add(self, record: TokenRecord) -> None: ...
    def replace(self, record: TokenRecord) -> None: ...


class AccountRepository(Protocol):
    def get(self, account_id: str) -> AccountRecord | None: ...
    def find_by_email(self, email: str) -> AccountRecord | None: ...
    def list(self) -> list[AccountRecord]:
        """All accounts, ordered by email."""
        ...

    def add(self, record: AccountRecord) -> None:
        """Raises `AlreadyExists` for a taken id or email."""
        ...

    def replace(self, record: AccountRecord) -> None: ...
    def delete(self, account_id: str) -> None: ...


class SessionRepository(Protocol):
    def get(self, id_hash: str) -> SessionRecord | None: ...
    def add(self, record: SessionRecord) -> None: ...
    def delete(self, id_hash: str) -> None:
        """Remove the session; a missing one is no error (signing out twice is harmless)."""
        ...

    def delete_subject(self, subject: str) -> None:
        """Remove every session of `subject` (its account was deleted or its role changed)."""
        ...

    def delete_expired(self, now: datetime) -> None: ...


class AuditRepository(Protocol):
    def append(self, entry: AuditEntry) -> None: ...
    def get(self, entry_id: str) -> AuditEntry | None: ...
    def list(
        self,
        *,
        resource_prefix: str | None = None,
        kind: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        """Newest first; `since` is inclusive, `until` exclusive."""
        ...


class ChangeRepository(Protocol):
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
        """Record a change in the current epoch, in this transaction, and return its sequence
        number. Numbers follow each other (n, n + 1, ...) in commit order with no gaps: a
        rolled-back change leaves no number. Only an epoch start skips numbers (by its gap)."""
        ...

    def since(self, after_seq: int, limit: int = 1000) -> list[Change]:
        """Committed changes with seq > `after_seq`, ascending, at most `limit`."""
        ...

    def latest_seq(self) -> int:
        """The highest committed seq, 0 when there is none."""
        ...


class NoticeRepository(Protocol):
    def get(self, notice_id: str) -> NoticeRecord | None: ...
    def list(self) -> list[NoticeRecord]:
        """Every notice, expired ones included, newest first."""
        ...

    def add(self, record: NoticeRecord) -> None:
        """Raises `AlreadyExists` for a taken id."""
        ...

    def delete(self, notice_id: str) -> None:
        """Raises `NotFound` for a missing notice."""
        ...


class EpochRepository(Protocol):
    def list(self) -> list[EpochRecord]:
        """Every epoch, oldest first (at least epoch 1)."""
        ...

    def current(self) -> EpochRecord: ...
    def begin(
        self,
        *,
        reason: str,
        timeline: int | None,
        system_id: str | None,
        at: datetime,
        seq_gap: int,
    ) -> EpochRecord:
        """Start the next epoch: record it after the counter's current seq and move the counter
        `seq_gap` on, so the next change gets a seq above anything an old primary may have
        handed out. Holds the counter (and on PostgreSQL the flag and segment tables) until
        commit. Versions and the marker change are the caller's (`services.epochs`)."""
        ...

    def lock(self) -> None:
        """Hold the counter, the flags and the segments until commit (as `begin` does), so an
        epoch decided on after this cannot race another process's."""
        ...

    def record_timeline(self, epoch: int, timeline: int, system_id: str | None) -> None:
        """Note the database identity of an epoch that began without one known."""
        ...

    def timeline(self) -> DatabaseTimeline | None:
        """The timeline of the PostgreSQL primary this transaction runs on; None on SQLite or in
        memory (nothing to compare) and on a standby (it takes no writes)."""
        ...


class LeaseRepository(Protocol):
    def acquire(
        self, name: str, holder: str, *, now: datetime, until: datetime
    ) -> LeaseRecord | None:
        """Take the lease `name` for `holder` until `until`, or renew it when `holder` has it
        already. None when another holder's lease is still valid at `now`, or when another
        worker is taking it in a transaction of its own this moment (PostgreSQL skips the
        row it has locked instead of waiting: `SELECT ... FOR UPDATE SKIP LOCKED`; SQLite's
        writers run one at a time). A lease that changes hands gets the next `fence`."""
        ...

    def holds(self, name: str, holder: str, fence: int, now: datetime) -> bool:
        """Whether `holder` still has lease `name`, taken with `fence`, at `now`. A job asks this
        inside the transaction that does its work, so work done by a holder that lost its lease
        (paused past `expires`) is rolled back instead of committed."""
        ...

    def release(self, name: str, holder: str) -> None:
        """Give the lease up (it expires now) if `holder` has it; otherwise nothing."""
        ...

    def list(self) -> list[LeaseRecord]:
        """Every lease, ordered by name."""
        ...


class ScheduledChangeRepository(Protocol):
    def get(self, change_id: str) -> ScheduledChangeRecord | None: ...
    def due(self, now: datetime, limit: int) -> list[ScheduledChangeRecord]:
        """Pending changes whose execution time is at or before `now`, oldest first, at most
        `limit`."""
        ...

    def backlog(self, now: datetime) -> tuple[int, datetime | None]:
        """How many pending changes are due at `now`, and the execution time of the oldest."""
        ...

    def claim(self, change_id: str) -> ScheduledChangeRecord | None:
        """The pending change, its row held until commit; None when it is not pending or another
        transaction holds it now (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite's writers run
        one at a time)."""
        ...

    def add(self, record: ScheduledChangeRecord) -> None: ...
    def replace(self, record: ScheduledChangeRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`, else raise
        `VersionConflict` (`NotFound` when it is gone)."""
        ...

    def delete(self, change_id: str) -> None:
        """Raises `NotFound` for a missing change."""
        ...

    def delete_pending(self, project: str, flag: str) -> int:
        """Remove the flag's pending changes (the flag is being deleted); returns how many."""
        ...

    def list(
        self,
        project: str,
        flag: str,
        *,
        environment: str | None = None,
        status: ScheduledChangeStatus | None = "pending",
    ) -> list[ScheduledChangeRecord]:
        """The flag's scheduled changes (in one environment, of one status; None: all), ordered
        by execution time then id."""
        ...


class TriggerRepository(Protocol):
    def get(self, trigger_id: str) -> TriggerRecord | None: ...
    def add(self, record: TriggerRecord) -> None: ...
    def replace(self, record: TriggerRecord, expected_version: int) -> None:
        """Store `record` if the stored version is still `expected_version`, else raise
        `VersionConflict` (`NotFound` when it is gone)."""
        ...

    def delete(self, trigger_id: str) -> None:
        """Raises `NotFound` for a missing trigger."""
        ...

    def delete_for_flag(self, project: str, flag: str) -> int:
        """Remove the flag's triggers (the flag is being deleted); returns how many."""
        ...

    def list(self, project: str, flag: str, environment: str) -> list[TriggerRecord]:
        """The flag's triggers in the environment, oldest first."""
        ...


class UnitOfWork(Protocol):
    """One transaction. Repositories are valid only inside it."""

    @property
    def projects(self) -> ProjectRepository: ...
    @property
    def environments(self) -> EnvironmentRepository: ...
    @property
    def flags(self) -> FlagRepository: ...
    @property
    def segments(self) -> SegmentRepository: ...
    @property
    def tokens(self) -> TokenRepository: ...
    @property
    def audit(self) -> AuditRepository: ...
    @property
    def changes(self) -> ChangeRepository: ...
    @property
    def accounts(self) -> AccountRepository: ...
    @property
    def sessions(self) -> SessionRepository: ...
    @property
    def epochs(self) -> EpochRepository: ...
    @property
    def notices(self) -> NoticeRepository: ...
    @property
    def leases(self) -> LeaseRepository: ...
    @property
    def webhooks(self) -> WebhookRepository: ...
    @property
    def deliveries(self) -> DeliveryRepository:
        """The webhook outbox: deliveries and their attempts (`services.webhook_ports`)."""
        ...

    @property
    def scheduled_changes(self) -> ScheduledChangeRepository: ...
    @property
    def triggers(self) -> TriggerRepository: ...
    @property
    def approval_requests(self) -> ApprovalRequestRepository:
        """Approval requests of flags and segments (`services.approval_ports`)."""
        ...

    @property
    def metrics(self) -> KeyedRepository: ...
    @property
    def experiments(self) -> KeyedRepository: ...


class Store(Protocol):
    def unit_of_work(self, *, read_only: bool = False) -> AbstractContextManager[UnitOfWork]:
        """A transaction: committed when the block exits cleanly, rolled back on an exception.
        `read_only=True` lets SQLite readers run beside a writer; writing in it is an error."""
        ...

    def ping(self) -> None:
        """Raise `StoreUnavailable` unless the store answers now."""
        ...

    def close(self) -> None: ...

    @property
    def replication(self) -> Replication:
        """Where the database stands in replication (embedded for SQLite and memory)."""
        ...


class ChangeFeed(Protocol):
    """Committed changes to subscribers, in seq order, without gaps or duplicates."""

    def publish(self, seq: int) -> None:
        """Announce that changes up to `seq` are committed. Call after the commit; never raises
        (a failed announcement is repaired by subscribers catching up from the outbox)."""
        ...

    def subscribe(self, after_seq: int) -> AsyncGenerator[Change, None]:
        """Every change with seq > `after_seq`: first the backlog from the outbox, then live."""
        ...

    async def latest_seq(self) -> int: ...
    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class StandbyState:
    """A standby streaming from this primary, as the primary sees it (pg_stat_replication)."""

    name: str
    """Its `application_name` (the harness and the runbook set it to the region's name)."""
    address: str | None
    state: str
    """"streaming", "catchup", "startup", ..."""
    replay_lag_seconds: float | None
    """How long the newest replayed commit took to be replayed there; None: nothing to measure."""
    lag_bytes: int | None
    """WAL written here and not yet replayed there."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DatabaseState:
    """Where the control plane's database stands in replication: what `/status` and
    `flagstaff dr status` report."""

    role: DatabaseRole
    timeline: int | None = None
    """The PostgreSQL timeline written (primary) or replayed (standby); it grows by one at each
    promotion. None when embedded."""
    replication_lag_seconds: float | None = None
    """A standby's staleness: 0 when it is streaming and has replayed all it received, else the
    age of the newest commit it replayed. None on a primary or embedded."""
    upstream: str | None = None
    """A standby's primary as `host:port`, while its WAL receiver runs (None otherwise)."""
    receiving: bool | None = None
    """A standby's WAL receiver is streaming from its primary now."""
    standbys: tuple[StandbyState, ...] = ()
    epoch: int = 1
    primary_region: str | None = None
    """The region recorded as holding the primary (by the primary region's API, or by
    `flagstaff dr promote`); None when nobody recorded one yet."""


class Replication(Protocol):
    """The control plane database's replication, read and acted on. Implementations: the SQL
    store's (PostgreSQL; SQLite answers "embedded") and an embedded one for the memory store."""

    def state(self) -> DatabaseState:
        """Raises `StoreUnavailable` when the database does not answer."""
        ...

    def promote(self, wait_seconds: float) -> bool:
        """End recovery on a standby (pg_promote); whether it finished within `wait_seconds`."""
        ...

    def record_primary_region(self, region: str, *, timeline: int | None, at: datetime) -> None:
        """Record that `region` holds the primary (a write: only on the primary)."""
        ...


__all__ = [
    "AccountRecord",
    "AccountRepository",
    "AuditEntry",
    "AuditRepository",
    "Change",
    "ChangeFeed",
    "ChangeKind",
    "ChangeRecord",
    "ChangeRepository",
    "Clock",
    "CredentialKind",
    "DatabaseRole",
    "DatabaseState",
    "DatabaseTimeline",
    "EnvironmentRecord",
    "EnvironmentRepository",
    "EpochRecord",
    "EpochRepository",
    "FlagRecord",
    "FlagRepository",
    "JsonObject",
    "LeaseRecord",
    "LeaseRepository",
    "NoticeRecord",
    "NoticeRepository",
    "ProjectRecord",
    "ProjectRepository",
    "Replication",
    "RetiredCredential",
    "Role",
    "ScheduledChangeRecord",
    "ScheduledChangeRepository",
    "ScheduledChangeStatus",
    "SegmentRecord",
    "SegmentRepository",
    "SessionRecord",
    "SessionRepository",
    "StandbyState",
    "Store",
    "TokenRecord",
    "TokenRepository",
    "TriggerRecord",
    "TriggerRepository",
    "UnitOfWork",
]
