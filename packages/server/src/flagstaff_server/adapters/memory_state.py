"""The in-memory store's tables: every aggregate's records by key, the change log and its
counter, the epochs. One `MemoryState` lives as long as its `InMemoryStore`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from flagstaff_server.adapters.memory_webhooks import WebhookTables
from flagstaff_server.services.approval_ports import ApprovalRequestRecord
from flagstaff_server.services.experiment_ports import KeyedRecord
from flagstaff_server.services.ports import (
    AccountRecord,
    AuditEntry,
    Change,
    EnvironmentRecord,
    EpochRecord,
    FlagRecord,
    LeaseRecord,
    NoticeRecord,
    ProjectRecord,
    ScheduledChangeRecord,
    SegmentRecord,
    SessionRecord,
    TokenRecord,
    TriggerRecord,
)

FIRST_EPOCH = EpochRecord(
    epoch=1, started_after_seq=0, at=datetime(1970, 1, 1, tzinfo=UTC), reason="initial"
)
"""Every store begins in epoch 1 (the SQL migration records the same row)."""


@dataclass(slots=True)
class MemoryState:
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
    custom_roles: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    teams: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    code_ref_repositories: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    code_ref_branches: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    code_ref_extinctions: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    releases: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
    sso: dict[tuple[str, str, str], KeyedRecord] = field(default_factory=dict)
