"""The SQL repositories of webhooks and chat integrations (`SqlWebhooks`: the receivers and their
health) and of their outbox (`SqlDeliveries`: deliveries and attempts). A receiver's deliveries,
attempts and health are removed with it by the tables' cascades (and a project's integrations
with the project). Rows to records and back; never commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Row, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from flagstaff_server.adapters.millis import from_millis, to_millis
from flagstaff_server.adapters.sql import schema
from flagstaff_server.adapters.sql.json_column import dump
from flagstaff_server.adapters.sql.transaction import Transaction
from flagstaff_server.errors import AlreadyExists
from flagstaff_server.services.webhook_ports import (
    AttemptRecord,
    DeliveryRecord,
    DeliveryStatus,
    PendingSummary,
    WebhookHealth,
    WebhookRecord,
)


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else to_millis(moment)


def _moment(millis: int | None) -> datetime | None:
    return None if millis is None else from_millis(millis)


class SqlWebhooks:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def get(self, webhook_id: str) -> WebhookRecord | None:
        table = schema.webhooks
        row = self._tx.connection.execute(select(table).where(table.c.id == webhook_id)).first()
        return None if row is None else _webhook(row)

    def list(self) -> list[WebhookRecord]:
        table = schema.webhooks
        rows = self._tx.connection.execute(select(table).order_by(table.c.created_ms, table.c.id))
        return [_webhook(row) for row in rows]

    def add(self, record: WebhookRecord) -> None:
        self._tx.insert_row(
            schema.webhooks, _webhook_row(record), taken=f"webhook {record.id!r} already exists"
        )

    def replace(self, record: WebhookRecord) -> None:
        table = schema.webhooks
        values = _webhook_row(record)
        del values["id"]
        self._tx.update_row(
            table, table.c.id == record.id, values=values, missing=f"no webhook {record.id!r}"
        )

    def delete(self, webhook_id: str) -> None:
        table = schema.webhooks
        self._tx.delete_row(table, table.c.id == webhook_id, missing=f"no webhook {webhook_id!r}")

    def health(self, webhook_id: str) -> WebhookHealth:
        table = schema.webhook_health
        row = self._tx.connection.execute(
            select(table).where(table.c.webhook == webhook_id)
        ).first()
        if row is None:
            return WebhookHealth(webhook=webhook_id)
        return WebhookHealth(
            webhook=row.webhook,
            failures=row.failures,
            open_until=_moment(row.open_until_ms),
            success_count=row.success_count,
            error_count=row.error_count,
            last_success=_moment(row.last_success_ms),
            last_error=_moment(row.last_error_ms),
            last_error_message=row.last_error,
        )

    def record_health(self, health: WebhookHealth) -> None:
        table = schema.webhook_health
        values = {
            "failures": health.failures,
            "open_until_ms": _ms(health.open_until),
            "success_count": health.success_count,
            "error_count": health.error_count,
            "last_success_ms": _ms(health.last_success),
            "last_error_ms": _ms(health.last_error),
            "last_error": health.last_error_message,
        }
        connection = self._tx.writable()
        changed = connection.execute(
            update(table).where(table.c.webhook == health.webhook).values(values)
        )
        if changed.rowcount == 0:
            connection.execute(insert(table).values(webhook=health.webhook, **values))


class SqlDeliveries:
    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    def enqueue(self, *, webhook: str, entry: str, order_key: str, at: datetime) -> int:
        table = schema.webhook_deliveries
        row = {
            "webhook": webhook,
            "entry": entry,
            "order_key": order_key,
            "status": "pending",
            "attempts": 0,
            "created_ms": to_millis(at),
            "next_ms": to_millis(at),
        }
        try:
            result = self._tx.writable().execute(insert(table).values(row).returning(table.c.id))
        except IntegrityError as exc:
            taken = f"entry {entry!r} is queued for webhook {webhook!r} already"
            raise AlreadyExists(taken) from exc
        delivery_id: int = result.scalar_one()
        return delivery_id

    def get(self, delivery_id: int) -> DeliveryRecord | None:
        table = schema.webhook_deliveries
        row = self._tx.connection.execute(select(table).where(table.c.id == delivery_id)).first()
        return None if row is None else _delivery(row)

    def pending(self, webhook: str, *, limit: int) -> list[DeliveryRecord]:
        table = schema.webhook_deliveries
        rows = self._tx.connection.execute(
            select(table)
            .where(table.c.status == "pending", table.c.webhook == webhook)
            .order_by(table.c.id)
            .limit(max(limit, 0))
        )
        return [_delivery(row) for row in rows]

    def summaries(self, now: datetime) -> list[PendingSummary]:
        table = schema.webhook_deliveries
        rows = self._tx.connection.execute(
            select(table.c.webhook, func.count(), func.min(table.c.next_ms))
            .where(table.c.status == "pending", table.c.next_ms <= to_millis(now))
            .group_by(table.c.webhook)
            .order_by(table.c.webhook)
        )
        return [
            PendingSummary(webhook=webhook, due=due, oldest=_moment(oldest))
            for webhook, due, oldest in rows
        ]

    def update(self, record: DeliveryRecord) -> None:
        table = schema.webhook_deliveries
        self._tx.update_row(
            table,
            table.c.id == record.id,
            values={
                "status": record.status,
                "attempts": record.attempts,
                "next_ms": to_millis(record.next_at),
                "finished_ms": _ms(record.finished),
            },
            missing=f"no delivery {record.id}",
        )

    def reschedule(self, webhook: str, at: datetime) -> None:
        table = schema.webhook_deliveries
        self._tx.writable().execute(
            update(table)
            .where(table.c.webhook == webhook, table.c.status == "pending")
            .values(next_ms=to_millis(at))
        )

    def give_up(self, webhook: str, *, created_before: datetime, at: datetime) -> int:
        table = schema.webhook_deliveries
        result = self._tx.writable().execute(
            update(table)
            .where(
                table.c.webhook == webhook,
                table.c.status == "pending",
                table.c.created_ms < to_millis(created_before),
            )
            .values(status="failed", finished_ms=to_millis(at))
        )
        return result.rowcount

    def prune(self, *, finished_before: datetime, limit: int) -> int:
        table = schema.webhook_deliveries
        chosen = (
            select(table.c.id)
            .where(table.c.finished_ms < to_millis(finished_before))
            .order_by(table.c.id)
            .limit(max(limit, 0))
        )
        ids = list(self._tx.connection.execute(chosen).scalars())
        if not ids:
            return 0
        connection = self._tx.writable()
        attempts = schema.webhook_attempts
        connection.execute(delete(attempts).where(attempts.c.delivery.in_(ids)))
        connection.execute(delete(table).where(table.c.id.in_(ids)))
        return len(ids)

    def recent(
        self, webhook: str, *, status: DeliveryStatus | None = None, limit: int, offset: int = 0
    ) -> list[DeliveryRecord]:
        table = schema.webhook_deliveries
        query = select(table).where(table.c.webhook == webhook)
        if status is not None:
            query = query.where(table.c.status == status)
        rows = self._tx.connection.execute(
            query.order_by(table.c.id.desc()).limit(max(limit, 0)).offset(max(offset, 0))
        )
        return [_delivery(row) for row in rows]

    def count(self, webhook: str, *, status: DeliveryStatus | None = None) -> int:
        table = schema.webhook_deliveries
        query = select(func.count()).select_from(table).where(table.c.webhook == webhook)
        if status is not None:
            query = query.where(table.c.status == status)
        total: int = self._tx.connection.execute(query).scalar_one()
        return total

    def add_attempt(self, attempt: AttemptRecord) -> None:
        self._tx.writable().execute(
            insert(schema.webhook_attempts).values(
                delivery=attempt.delivery,
                webhook=attempt.webhook,
                at_ms=to_millis(attempt.at),
                status_code=attempt.status_code,
                latency_ms=attempt.latency_ms,
                error=attempt.error,
            )
        )

    def attempts(self, delivery_ids: Sequence[int]) -> dict[int, list[AttemptRecord]]:
        if not delivery_ids:
            return {}
        table = schema.webhook_attempts
        rows = self._tx.connection.execute(
            select(table).where(table.c.delivery.in_(delivery_ids)).order_by(table.c.id)
        )
        found: dict[int, list[AttemptRecord]] = {}
        for row in rows:
            found.setdefault(row.delivery, []).append(
                AttemptRecord(
                    delivery=row.delivery,
                    webhook=row.webhook,
                    at=from_millis(row.at_ms),
                    status_code=row.status_code,
                    latency_ms=row.latency_ms,
                    error=row.error,
                )
            )
        return found


def _webhook_row(record: WebhookRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "integration": record.integration,
        "project": record.project,
        "on": record.on,
        "created_ms": to_millis(record.created),
        "doc": dump(record.doc),
    }


def _webhook(row: Row[Any]) -> WebhookRecord:
    return WebhookRecord(
        id=row.id,
        integration=row.integration,
        project=row.project,
        on=bool(row.on),
        created=from_millis(row.created_ms),
        doc=orjson.loads(row.doc),
    )


def _delivery(row: Row[Any]) -> DeliveryRecord:
    return DeliveryRecord(
        id=row.id,
        webhook=row.webhook,
        entry=row.entry,
        order_key=row.order_key,
        status=row.status,
        attempts=row.attempts,
        created=from_millis(row.created_ms),
        next_at=from_millis(row.next_ms),
        finished=_moment(row.finished_ms),
    )
