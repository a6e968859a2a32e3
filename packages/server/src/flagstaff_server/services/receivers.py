"""What webhooks and chat integrations share in the API: the rules of their fields (URL, policy
statements, secret), their `_status` (the worker's counts and circuit) and their delivery log.
Used by `services.webhooks` and `services.integrations`; no use case of its own."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from flagstaff_server.domain.document import NAME_MAX_LENGTH
from flagstaff_server.domain.policy import parse_statements, statement_json
from flagstaff_server.domain.policy_catalog import LAUNCHDARKLY_ACTIONS
from flagstaff_server.errors import Forbidden, InvalidInput, NotFound, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.audit import TITLE_VERBS
from flagstaff_server.services.plane import epoch_millis
from flagstaff_server.services.ports import JsonObject, UnitOfWork
from flagstaff_server.services.webhook_ports import (
    AttemptRecord,
    DeliveryRecord,
    DeliveryStatus,
    WebhookRecord,
)

URL_MAX_LENGTH = 2048
SECRET_MAX_LENGTH = 256
DELIVERY_STATUSES: tuple[DeliveryStatus, ...] = ("pending", "delivered", "failed")

KNOWN_ACTIONS = LAUNCHDARKLY_ACTIONS | frozenset(TITLE_VERBS)
"""What a filter may name: LaunchDarkly's actions and those of Flagstaff's own audit entries."""


def check_url(value: Any, path: str) -> str:
    """An absolute http(s) URL with a host."""
    if not isinstance(value, str) or not 0 < len(value) <= URL_MAX_LENGTH:
        raise ValidationError(f"a URL is a string of 1 to {URL_MAX_LENGTH} characters", path=path)
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or not port_ok
        or any(char.isspace() for char in value)
    ):
        raise ValidationError(
            f"expected an absolute http:// or https:// URL with a host, got {value[:200]!r}",
            path=path,
        )
    return value


def check_statements(value: Any, path: str) -> list[JsonObject]:
    """A policy filter, in LaunchDarkly's statement JSON (`domain.policy`)."""
    return [
        statement_json(statement)
        for statement in parse_statements(value, path=path, actions=KNOWN_ACTIONS)
    ]


def check_optional_name(value: Any, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > NAME_MAX_LENGTH:
        raise ValidationError(
            f"a name is a string of at most {NAME_MAX_LENGTH} characters", path=path
        )
    return value


def check_secret(value: Any, path: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= SECRET_MAX_LENGTH:
        raise ValidationError(
            f"a secret is a string of 1 to {SECRET_MAX_LENGTH} characters", path=path
        )
    return value


def new_secret() -> str:
    return secrets.token_hex(32)


def check_status_filter(value: str | None) -> DeliveryStatus | None:
    if value is None:
        return None
    for status in DELIVERY_STATUSES:
        if value == status:
            return status
    raise InvalidInput(
        f"status is one of {', '.join(DELIVERY_STATUSES)}; got {value[:64]!r}", path="status"
    )


def require_unscoped(actor: Actor, *, admin: bool) -> None:
    """Webhooks concern the whole account (every project's changes): a scoped token reads none;
    changing one takes the admin role."""
    authorize(actor, "admin" if admin else "reader")
    if actor.is_scoped:
        raise Forbidden("webhooks concern the whole account: this needs an unscoped access token")


def existing(uow: UnitOfWork, webhook_id: str, *, integration: bool = False) -> WebhookRecord:
    record = uow.webhooks.get(webhook_id)
    if record is None or (record.integration is not None) != integration:
        what = "integration" if integration else "webhook"
        raise NotFound(f"no {what} {webhook_id[:64]!r}")
    return record


def status_json(uow: UnitOfWork, record: WebhookRecord, now_ms: int) -> JsonObject:
    """`_status`: LaunchDarkly's integration status counts, with the outbox and the circuit."""
    health = uow.webhooks.health(record.id)
    open_until = None if health.open_until is None else epoch_millis(health.open_until)
    return {
        "successCount": health.success_count,
        "errorCount": health.error_count,
        "lastSuccess": None if health.last_success is None else epoch_millis(health.last_success),
        "lastError": None if health.last_error is None else epoch_millis(health.last_error),
        "lastErrorMessage": health.last_error_message,
        "pending": uow.deliveries.count(record.id, status="pending"),
        "failures": health.failures,
        "circuit": "open" if open_until is not None and open_until > now_ms else "closed",
        "circuitOpenUntil": open_until,
    }


def attempt_json(attempt: AttemptRecord) -> JsonObject:
    return {
        "date": epoch_millis(attempt.at),
        "statusCode": attempt.status_code,
        "latencyMs": attempt.latency_ms,
        "error": attempt.error,
    }


def delivery_json(delivery: DeliveryRecord, attempts: list[AttemptRecord], base: str) -> JsonObject:
    return {
        "_links": {
            "self": {"href": f"{base}/deliveries/{delivery.id}", "type": "application/json"},
            "auditLogEntry": {
                "href": f"/api/v2/auditlog/{delivery.entry}",
                "type": "application/json",
            },
        },
        "_id": str(delivery.id),
        "auditLogEntryId": delivery.entry,
        "orderKey": delivery.order_key,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "creationDate": epoch_millis(delivery.created),
        "nextAttemptDate": epoch_millis(delivery.next_at) if delivery.status == "pending" else None,
        "finishedDate": None if delivery.finished is None else epoch_millis(delivery.finished),
        "attemptLog": [attempt_json(attempt) for attempt in attempts],
    }


def delivery_page(
    uow: UnitOfWork,
    record: WebhookRecord,
    base: str,
    *,
    status: DeliveryStatus | None,
    limit: int,
    offset: int,
) -> tuple[list[JsonObject], int]:
    """One page of a receiver's deliveries, newest first, with their attempts; and the total."""
    page = uow.deliveries.recent(record.id, status=status, limit=limit, offset=offset)
    attempts = uow.deliveries.attempts([delivery.id for delivery in page])
    items = [delivery_json(d, attempts.get(d.id, []), base) for d in page]
    return items, uow.deliveries.count(record.id, status=status)


def one_delivery(uow: UnitOfWork, record: WebhookRecord, base: str, delivery_id: str) -> JsonObject:
    numeric = delivery_id.isdigit() and len(delivery_id) <= 18  # ids fit in a BIGINT
    found = uow.deliveries.get(int(delivery_id)) if numeric else None
    if found is None or found.webhook != record.id:
        raise NotFound(f"no delivery {delivery_id[:32]!r} of {record.id!r}")
    return delivery_json(found, uow.deliveries.attempts([found.id]).get(found.id, []), base)
