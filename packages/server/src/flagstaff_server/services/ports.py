"""Storage and change-feed ports: the unit of work and the store that adapters implement, and
(re-exported) every record and repository Protocol they hand out. Pure declarations; no I/O, no
clock and no adapter code belongs here. Each aggregate's records and repository live in a module
of their own: `catalog_ports` (projects, environments, flags, segments), `identity_ports` (tokens,
accounts, sessions), `history_ports` (audit, change outbox, epochs, the feed), `workflow_ports`
(scheduled changes, triggers), `webhook_ports`, `approval_ports`, `experiment_ports`, and
`operations_ports` (leases, notices, replication); `port_types` holds
the JSON and clock types they share.

Errors (from `flagstaff_server.errors`): `add` raises `AlreadyExists`, `replace`/`delete` raise
`NotFound` for a missing row and `VersionConflict` when `expected_version` is not current; any
driver failure surfaces as `StoreUnavailable`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from flagstaff_server.services.approval_ports import ApprovalRequestRepository
from flagstaff_server.services.catalog_ports import (
    CredentialKind,
    EnvironmentRecord,
    EnvironmentRepository,
    FlagRecord,
    FlagRepository,
    ProjectRecord,
    ProjectRepository,
    RetiredCredential,
    SegmentRecord,
    SegmentRepository,
)
from flagstaff_server.services.experiment_ports import KeyedRepository
from flagstaff_server.services.history_ports import (
    AuditEntry,
    AuditRepository,
    Change,
    ChangeFeed,
    ChangeKind,
    ChangeRecord,
    ChangeRepository,
    DatabaseTimeline,
    EpochRecord,
    EpochRepository,
)
from flagstaff_server.services.identity_ports import (
    AccountRecord,
    AccountRepository,
    Role,
    SessionRecord,
    SessionRepository,
    TokenRecord,
    TokenRepository,
)
from flagstaff_server.services.operations_ports import (
    DatabaseRole,
    DatabaseState,
    LeaseRecord,
    LeaseRepository,
    NoticeRecord,
    NoticeRepository,
    Replication,
    StandbyState,
)
from flagstaff_server.services.port_types import Clock, JsonObject
from flagstaff_server.services.webhook_ports import DeliveryRepository, WebhookRepository
from flagstaff_server.services.workflow_ports import (
    ScheduledChangeRecord,
    ScheduledChangeRepository,
    ScheduledChangeStatus,
    TriggerRecord,
    TriggerRepository,
)


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
    @property
    def custom_roles(self) -> KeyedRepository:
        """Custom roles, account-wide (project and environment ""), keyed by role key."""
        ...

    @property
    def teams(self) -> KeyedRepository:
        """Teams, account-wide like custom roles, keyed by team key."""
        ...

    @property
    def code_ref_repositories(self) -> KeyedRepository:
        """Code-reference repositories, scope ("", ""), key the repository name."""
        ...

    @property
    def code_ref_branches(self) -> KeyedRepository:
        """A repository's branches and their references, scope (repository, "")."""
        ...

    @property
    def code_ref_extinctions(self) -> KeyedRepository:
        """Extinction events, scope (repository, branch), key the event's id."""
        ...

    @property
    def releases(self) -> KeyedRepository:
        """Progressive and guarded rollouts, per environment, keyed by id
        (`services.automated_releases`)."""
        ...

    @property
    def sso(self) -> KeyedRepository:
        """Single sign-on: its settings (scope ("", ""), key "settings") and the sign-ins under
        way (scope ("sign-in", ""), key a hash of the `state`; `services.sso`)."""
        ...


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
