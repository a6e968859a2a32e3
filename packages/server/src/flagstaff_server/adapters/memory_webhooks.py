"""The in-memory store's webhooks, integrations and their outbox: the reference behaviour of
`services.webhook_ports`, kept in `WebhookTables` inside the memory store's state and written
through its undo journal. Keeps no references to callers' objects."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

from flagstaff_server.adapters.millis import truncate
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.webhook_ports import (
    AttemptRecord,
    DeliveryRecord,
    DeliveryRepository,
    DeliveryStatus,
    PendingSummary,
    WebhookHealth,
    WebhookRecord,
    WebhookRepository,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")
K = TypeVar("K")
V = TypeVar("V")

LAST_ID = "delivery"


class Journal(Protocol):
    """What these tables need of the memory store's undo journal."""

    def put(self, table: dict[K, V], key: K, value: V) -> None: ...
    def remove(self, table: dict[K, V], key: K) -> None: ...


def _kept(record: R) -> R:
    """A private copy with times cut to the millisecond, as the SQL store keeps them."""
    clone = copy.deepcopy(record)
    times = {
        f.name: truncate(value)
        for f in fields(clone)
        if isinstance(value := getattr(clone, f.name), datetime)
    }
    return replace(clone, **times) if times else clone


@dataclass(slots=True)
class WebhookTables:
    webhooks: dict[str, WebhookRecord] = field(default_factory=dict)
    health: dict[str, WebhookHealth] = field(default_factory=dict)
    deliveries: dict[int, DeliveryRecord] = field(default_factory=dict)
    """In id order (ids only grow)."""
    attempts: dict[int, tuple[AttemptRecord, ...]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)

    def remove_webhook(self, webhook_id: str, journal: Journal) -> None:
        journal.remove(self.webhooks, webhook_id)
        if webhook_id in self.health:
            journal.remove(self.health, webhook_id)
        for delivery in [d for d in self.deliveries.values() if d.webhook == webhook_id]:
            self.remove_delivery(delivery.id, journal)

    def remove_delivery(self, delivery_id: int, journal: Journal) -> None:
        journal.remove(self.deliveries, delivery_id)
        if delivery_id in self.attempts:
            journal.remove(self.attempts, delivery_id)

    def remove_project(self, project: str, journal: Journal) -> None:
        """A project's deletion takes its integrations along (the SQL tables cascade)."""
        for record in [r for r in self.webhooks.values() if r.project == project]:
            self.remove_webhook(record.id, journal)


class InMemoryWebhooks:
    def __init__(self, tables: WebhookTables, journal: Journal) -> None:
        self._tables, self._journal = tables, journal

    def get(self, webhook_id: str) -> WebhookRecord | None:
        return copy.deepcopy(self._tables.webhooks.get(webhook_id))

    def list(self) -> list[WebhookRecord]:
        records = sorted(self._tables.webhooks.values(), key=lambda r: (r.created, r.id))
        return copy.deepcopy(records)

    def add(self, record: WebhookRecord) -> None:
        if record.id in self._tables.webhooks:
            raise AlreadyExists(f"webhook {record.id!r} already exists")
        self._journal.put(self._tables.webhooks, record.id, _kept(record))

    def replace(self, record: WebhookRecord) -> None:
        if record.id not in self._tables.webhooks:
            raise NotFound(f"no webhook {record.id!r}")
        self._journal.put(self._tables.webhooks, record.id, _kept(record))

    def delete(self, webhook_id: str) -> None:
        if webhook_id not in self._tables.webhooks:
            raise NotFound(f"no webhook {webhook_id!r}")
        self._tables.remove_webhook(webhook_id, self._journal)

    def health(self, webhook_id: str) -> WebhookHealth:
        found = self._tables.health.get(webhook_id)
        return copy.deepcopy(found) if found else WebhookHealth(webhook=webhook_id)

    def record_health(self, health: WebhookHealth) -> None:
        self._journal.put(self._tables.health, health.webhook, _kept(health))


class InMemoryDeliveries:
    def __init__(self, tables: WebhookTables, journal: Journal) -> None:
        self._tables, self._journal = tables, journal

    def enqueue(self, *, webhook: str, entry: str, order_key: str, at: datetime) -> int:
        tables = self._tables
        if webhook not in tables.webhooks:
            raise NotFound(f"no webhook {webhook!r}")
        if any(d.webhook == webhook and d.entry == entry for d in tables.deliveries.values()):
            raise AlreadyExists(f"entry {entry!r} is queued for webhook {webhook!r} already")
        delivery_id = tables.counters.get(LAST_ID, 0) + 1
        self._journal.put(tables.counters, LAST_ID, delivery_id)
        record = DeliveryRecord(
            id=delivery_id,
            webhook=webhook,
            entry=entry,
            order_key=order_key,
            created=at,
            next_at=at,
        )
        self._journal.put(tables.deliveries, delivery_id, _kept(record))
        return delivery_id

    def get(self, delivery_id: int) -> DeliveryRecord | None:
        return copy.deepcopy(self._tables.deliveries.get(delivery_id))

    def pending(self, webhook: str, *, limit: int) -> list[DeliveryRecord]:
        found = [
            d for d in self._tables.deliveries.values() if d.webhook == webhook and is_pending(d)
        ]
        return copy.deepcopy(found[: max(limit, 0)])

    def summaries(self, now: datetime) -> list[PendingSummary]:
        due: dict[str, list[datetime]] = {}
        for delivery in self._tables.deliveries.values():
            if is_pending(delivery) and delivery.next_at <= truncate(now):
                due.setdefault(delivery.webhook, []).append(delivery.next_at)
        return [
            PendingSummary(webhook=webhook, due=len(times), oldest=min(times))
            for webhook, times in sorted(due.items())
        ]

    def update(self, record: DeliveryRecord) -> None:
        current = self._tables.deliveries.get(record.id)
        if current is None:
            raise NotFound(f"no delivery {record.id}")
        kept = replace(
            current,
            status=record.status,
            attempts=record.attempts,
            next_at=record.next_at,
            finished=record.finished,
        )
        self._journal.put(self._tables.deliveries, record.id, _kept(kept))

    def reschedule(self, webhook: str, at: datetime) -> None:
        for delivery in list(self._tables.deliveries.values()):
            if delivery.webhook == webhook and is_pending(delivery):
                moved = _kept(replace(delivery, next_at=at))
                self._journal.put(self._tables.deliveries, delivery.id, moved)

    def give_up(self, webhook: str, *, created_before: datetime, at: datetime) -> int:
        given_up = 0
        for delivery in list(self._tables.deliveries.values()):
            if (
                delivery.webhook == webhook
                and is_pending(delivery)
                and delivery.created < truncate(created_before)
            ):
                failed = _kept(replace(delivery, status="failed", finished=at))
                self._journal.put(self._tables.deliveries, delivery.id, failed)
                given_up += 1
        return given_up

    def prune(self, *, finished_before: datetime, limit: int) -> int:
        old = [
            d.id
            for d in self._tables.deliveries.values()
            if d.finished is not None and d.finished < truncate(finished_before)
        ][: max(limit, 0)]
        for delivery_id in old:
            self._tables.remove_delivery(delivery_id, self._journal)
        return len(old)

    def recent(
        self, webhook: str, *, status: DeliveryStatus | None = None, limit: int, offset: int = 0
    ) -> list[DeliveryRecord]:
        found = [
            d
            for d in reversed(self._tables.deliveries.values())
            if d.webhook == webhook and (status is None or d.status == status)
        ]
        start = max(offset, 0)
        return copy.deepcopy(found[start : start + max(limit, 0)])

    def count(self, webhook: str, *, status: DeliveryStatus | None = None) -> int:
        return sum(
            1
            for d in self._tables.deliveries.values()
            if d.webhook == webhook and (status is None or d.status == status)
        )

    def add_attempt(self, attempt: AttemptRecord) -> None:
        tables = self._tables
        if attempt.delivery not in tables.deliveries:
            raise NotFound(f"no delivery {attempt.delivery}")
        logged = (*tables.attempts.get(attempt.delivery, ()), _kept(attempt))
        self._journal.put(tables.attempts, attempt.delivery, logged)

    def attempts(self, delivery_ids: Sequence[int]) -> dict[int, list[AttemptRecord]]:
        return {
            delivery_id: copy.deepcopy(list(self._tables.attempts[delivery_id]))
            for delivery_id in delivery_ids
            if delivery_id in self._tables.attempts
        }


def is_pending(delivery: DeliveryRecord) -> bool:
    return delivery.status == "pending"


if TYPE_CHECKING:
    _webhooks_conform: type[WebhookRepository] = InMemoryWebhooks
    _deliveries_conform: type[DeliveryRepository] = InMemoryDeliveries
