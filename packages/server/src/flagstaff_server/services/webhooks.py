"""Webhooks through the management API, in LaunchDarkly's shapes (`/api/v2/webhooks`): create,
list, read, JSON-Patch and delete, and read each one's delivery log. Each write is audited (the
audit entry never holds the secret). Webhooks concern the whole account: reading takes an
unscoped token, changing one an unscoped admin; only admins see the secret.

Delivery itself is the worker's (`services.webhook_delivery`); deliveries are queued in the
transaction of each change (`services.webhook_outbox`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from flagstaff_server.domain.document import pointer
from flagstaff_server.services import field, receivers
from flagstaff_server.services.access import Actor
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork
from flagstaff_server.services.webhook_ports import DeliveryStatus, WebhookRecord

LINK_BASE = "/api/v2/webhooks"
EDITABLE: dict[str, field.Rule] = {
    "url": receivers.check_url,
    "on": field.check_bool,
    "sign": field.check_bool,
    "secret": receivers.check_secret,
    "name": receivers.check_optional_name,
    "tags": field.check_tags,
    "statements": receivers.check_statements,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookRequest:
    url: str
    sign: bool
    on: bool
    secret: str | None = None
    name: str | None = None
    tags: tuple[str, ...] = ()
    statements: Any = None
    """As received; checked here (`receivers.check_statements`)."""


def resource_of(webhook_id: str) -> str:
    return f"webhook/{webhook_id}"


def href(webhook_id: str) -> str:
    return f"{LINK_BASE}/{webhook_id}"


def audited(record: WebhookRecord) -> JsonObject:
    """What the audit log keeps of a webhook: everything but the secret."""
    doc = record.doc
    return {
        "_id": record.id,
        "url": doc["url"],
        "on": record.on,
        "name": doc.get("name"),
        "tags": list(doc.get("tags", [])),
        "statements": list(doc.get("statements", [])),
        "sign": bool(doc.get("sign")),
    }


def represent(uow: UnitOfWork, record: WebhookRecord, actor: Actor, now_ms: int) -> JsonObject:
    """LaunchDarkly's `Webhook`, with `sign` (LaunchDarkly does not echo it; the UI needs it) and
    `_status` (the worker's counts, the outbox and the circuit)."""
    body: JsonObject = {
        "_links": {
            "self": {"href": href(record.id), "type": "application/json"},
            "deliveries": {"href": f"{href(record.id)}/deliveries", "type": "application/json"},
        },
        **audited(record),
        "_status": receivers.status_json(uow, record, now_ms),
    }
    secret = record.doc.get("secret")
    if actor.role == "admin" and isinstance(secret, str):
        body["secret"] = secret
    return body


def checked_doc(values: dict[str, Any]) -> dict[str, Any]:
    """A webhook's stored fields; signing without a given secret gets a generated one."""
    doc = {
        "url": values["url"],
        "sign": values["sign"],
        "name": values.get("name"),
        "tags": values.get("tags", []),
        "statements": values.get("statements", []),
    }
    secret = values.get("secret")
    if secret is None and values["sign"]:
        secret = receivers.new_secret()
    if secret is not None:
        doc["secret"] = secret
    return doc


def create_webhook(plane: ControlPlane, actor: Actor, request: WebhookRequest) -> JsonObject:
    receivers.require_unscoped(actor, admin=True)
    values: dict[str, Any] = {
        "url": receivers.check_url(request.url, "/url"),
        "sign": request.sign,
        "name": receivers.check_optional_name(request.name, "/name"),
        "tags": field.check_tags(list(request.tags), "/tags"),
        "statements": receivers.check_statements(request.statements, "/statements"),
    }
    if request.secret is not None:
        values["secret"] = receivers.check_secret(request.secret, "/secret")
    with plane.write(actor) as tx:
        record = WebhookRecord(id=new_id(), on=request.on, created=tx.now, doc=checked_doc(values))
        tx.uow.webhooks.add(record)
        tx.audit(
            kind="webhook",
            resource=resource_of(record.id),
            action="createWebhook",
            after=audited(record),
        )
        return represent(tx.uow, record, actor, epoch_millis(tx.now))


def list_webhooks(plane: ControlPlane, actor: Actor) -> list[JsonObject]:
    receivers.require_unscoped(actor, admin=False)
    now_ms = epoch_millis(plane.clock())
    with plane.read() as uow:
        return [
            represent(uow, record, actor, now_ms)
            for record in uow.webhooks.list()
            if record.integration is None
        ]


def get_webhook(plane: ControlPlane, actor: Actor, webhook_id: str) -> JsonObject:
    receivers.require_unscoped(actor, admin=False)
    with plane.read() as uow:
        record = receivers.existing(uow, webhook_id)
        return represent(uow, record, actor, epoch_millis(plane.clock()))


def patched(record: WebhookRecord, body: Any) -> tuple[WebhookRecord, field.PatchedFields]:
    before = {**audited(record), "secret": record.doc.get("secret")}
    if before["secret"] is None:
        del before["secret"]
    if before["name"] is None:
        del before["name"]
    result = field.patch_fields(
        before,
        body,
        editable=EDITABLE,
        read_only=("_id",),
        required=("url", "on", "sign"),
        noun="webhook",
    )
    updated = replace(record, on=result.values["on"], doc=checked_doc(result.values))
    return updated, result


def patch_webhook(plane: ControlPlane, actor: Actor, webhook_id: str, body: Any) -> JsonObject:
    """A JSON Patch of `url`, `on`, `sign`, `secret`, `name`, `tags` or `statements` (or
    `{comment, patch}`): the result is checked whole, so a bad value changes nothing."""
    receivers.require_unscoped(actor, admin=True)
    with plane.write(actor) as tx:
        record = receivers.existing(tx.uow, webhook_id)
        updated, result = patched(record, body)
        tx.uow.webhooks.replace(updated)
        audit_update(tx, record, updated, comment=result.comment, patch=scrubbed(result.patch))
        return represent(tx.uow, updated, actor, epoch_millis(tx.now))


def scrubbed(patch: Any) -> Any:
    """The patch for the audit log, without a new secret's value."""
    if isinstance(patch, dict) and isinstance(patch.get("merge"), dict):
        merge = patch["merge"]
        return {"merge": {**merge, "secret": "(secret)"}} if "secret" in merge else patch
    if not isinstance(patch, list):
        return patch
    return [
        {**op, "value": "(secret)"}
        if isinstance(op, dict) and op.get("path") == pointer("secret") and "value" in op
        else op
        for op in patch
    ]


def audit_update(
    tx: Transaction, before: WebhookRecord, after: WebhookRecord, *, comment: str | None, patch: Any
) -> None:
    tx.audit(
        kind="webhook",
        resource=resource_of(after.id),
        action="updateWebhook",
        comment=comment,
        patch=patch,
        before=audited(before),
        after=audited(after),
    )


def delete_webhook(plane: ControlPlane, actor: Actor, webhook_id: str) -> None:
    """Remove the webhook with its outbox: nothing more is sent to it."""
    receivers.require_unscoped(actor, admin=True)
    with plane.write(actor) as tx:
        record = receivers.existing(tx.uow, webhook_id)
        tx.uow.webhooks.delete(record.id)
        tx.audit(
            kind="webhook",
            resource=resource_of(record.id),
            action="deleteWebhook",
            before=audited(record),
        )


def list_deliveries(
    plane: ControlPlane,
    actor: Actor,
    webhook_id: str,
    *,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[list[JsonObject], int]:
    receivers.require_unscoped(actor, admin=False)
    wanted: DeliveryStatus | None = receivers.check_status_filter(status)
    with plane.read() as uow:
        record = receivers.existing(uow, webhook_id)
        return receivers.delivery_page(
            uow, record, href(record.id), status=wanted, limit=limit, offset=offset
        )


def get_delivery(
    plane: ControlPlane, actor: Actor, webhook_id: str, delivery_id: str
) -> JsonObject:
    receivers.require_unscoped(actor, admin=False)
    with plane.read() as uow:
        record = receivers.existing(uow, webhook_id)
        return receivers.one_delivery(uow, record, href(record.id), delivery_id)
