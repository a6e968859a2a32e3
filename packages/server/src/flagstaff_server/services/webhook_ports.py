"""Storage ports of webhooks and chat integrations: the receivers of changes, their outbox of
deliveries (written in the transaction of the change), each delivery's attempts, and each
receiver's health (its circuit). Pure declarations, like `services.ports`, which gathers them
into the unit of work (docs/workflows.md, "Webhooks")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from flagstaff_server.domain.notification import Message

DeliveryStatus = Literal["pending", "delivered", "failed"]
"""pending: not delivered yet (it may have failed attempts); delivered: a 2xx answered it;
failed: given up (too old at a failed attempt)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookRecord:
    """A receiver of changes: a webhook of the account (`integration` None), or a chat
    integration of project `project` (`integration` "slack" or "generic")."""

    id: str
    integration: str | None = None
    project: str | None = None
    on: bool
    created: datetime
    doc: dict[str, Any]
    """Its other fields: url, name, tags, statements, sign and secret (webhooks); name, tags,
    statements and config (integrations)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookHealth:
    """What the worker knows of a receiver: consecutive failures and the circuit they opened,
    and counts for the API's `_status`."""

    webhook: str
    failures: int = 0
    """Failed attempts in a row; a success resets it."""
    open_until: datetime | None = None
    """While the circuit is open, no attempt before this (then one probe)."""
    success_count: int = 0
    error_count: int = 0
    last_success: datetime | None = None
    last_error: datetime | None = None
    last_error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryRecord:
    """One change (audit entry) to send to one receiver. `id` is the outbox order: deliveries
    with the same `order_key` (one flag) go out in `id` order."""

    id: int
    webhook: str
    entry: str
    """The audit entry's id: the body is its representation."""
    order_key: str
    status: DeliveryStatus = "pending"
    attempts: int = 0
    created: datetime
    next_at: datetime
    """The earliest moment of its next attempt (pending only)."""
    finished: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptRecord:
    delivery: int
    webhook: str
    at: datetime
    status_code: int | None = None
    """The receiver's HTTP status; None when none came (refused, timed out, ...)."""
    latency_ms: int
    error: str | None = None
    """Why it failed (None: a 2xx answer)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingSummary:
    """A receiver's pending deliveries: how many are due by the time asked, and the earliest
    `next_at` of those."""

    webhook: str
    due: int
    oldest: datetime | None


class WebhookRepository(Protocol):
    def get(self, webhook_id: str) -> WebhookRecord | None: ...
    def list(self) -> list[WebhookRecord]:
        """Every webhook and integration, oldest first (then by id)."""
        ...

    def add(self, record: WebhookRecord) -> None:
        """Raises `AlreadyExists` for a taken id."""
        ...

    def replace(self, record: WebhookRecord) -> None:
        """Raises `NotFound` for a missing one."""
        ...

    def delete(self, webhook_id: str) -> None:
        """Remove it with its deliveries, their attempts and its health; `NotFound` if missing.
        (Deleting a project removes its integrations the same way.)"""
        ...

    def health(self, webhook_id: str) -> WebhookHealth:
        """Its health; a fresh one (no failures, nothing counted) when none was recorded."""
        ...

    def record_health(self, health: WebhookHealth) -> None: ...


class DeliveryRepository(Protocol):
    def enqueue(self, *, webhook: str, entry: str, order_key: str, at: datetime) -> int:
        """Add a pending delivery due at `at`, in this transaction; its id, above every id
        handed out before."""
        ...

    def get(self, delivery_id: int) -> DeliveryRecord | None: ...
    def pending(self, webhook: str, *, limit: int) -> list[DeliveryRecord]:
        """The receiver's pending deliveries, lowest id first, at most `limit`."""
        ...

    def summaries(self, now: datetime) -> list[PendingSummary]:
        """Per receiver with pending deliveries due by `now`: how many, the earliest."""
        ...

    def update(self, record: DeliveryRecord) -> None:
        """Store its status, attempts, next_at and finished; `NotFound` when it is gone (its
        receiver was deleted meanwhile)."""
        ...

    def reschedule(self, webhook: str, at: datetime) -> None:
        """Every pending delivery of the receiver becomes due at `at` (its circuit closed: they
        were waiting for the receiver, not for themselves)."""
        ...

    def give_up(self, webhook: str, *, created_before: datetime, at: datetime) -> int:
        """Mark the receiver's pending deliveries created before `created_before` failed,
        finished at `at`; how many."""
        ...

    def prune(self, *, finished_before: datetime, limit: int) -> int:
        """Delete up to `limit` finished deliveries (and their attempts) finished before."""
        ...

    def recent(
        self, webhook: str, *, status: DeliveryStatus | None = None, limit: int, offset: int = 0
    ) -> list[DeliveryRecord]:
        """The receiver's deliveries, newest (highest id) first."""
        ...

    def count(self, webhook: str, *, status: DeliveryStatus | None = None) -> int: ...
    def add_attempt(self, attempt: AttemptRecord) -> None: ...
    def attempts(self, delivery_ids: Sequence[int]) -> dict[int, list[AttemptRecord]]:
        """The attempts of each delivery, oldest first (deliveries without any are absent)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What came of one attempt to send."""

    status_code: int | None
    latency_ms: int
    error: str | None
    """None: a 2xx answer, the delivery is made."""

    @property
    def delivered(self) -> bool:
        return self.error is None


class Sender(Protocol):
    """Sends one message (`domain.notification.Message`); never raises for the receiver's
    faults, which are outcomes. Implemented by `adapters.webhook_sender.HttpSender`."""

    def send(self, message: Message) -> Outcome: ...
