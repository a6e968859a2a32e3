"""Chat integrations of a project through the management API
(`/api/v2/projects/{projectKey}/integrations/{integrationKey}`, `slack` or `generic`): create,
list, read, JSON-Patch and delete, and read each one's delivery log. They are receivers like
webhooks (the same outbox, filter, worker, retries and circuit: `services.webhook_delivery`),
for the changes of their own project only; what they are sent is `domain.chat_message`. Reading
takes a reader of the project, changing one an admin of it; the URL (a secret for Slack) and a
generic integration's signing secret are shown to admins only, and never to the audit log.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.errors import NotFound, ValidationError
from flagstaff_server.services import field, receivers
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork
from flagstaff_server.services.webhook_ports import DeliveryStatus, WebhookRecord

KINDS = ("slack", "generic")
MASK = "********"


def base_path(project: str, kind: str) -> str:
    return f"/api/v2/projects/{project}/integrations/{kind}"


def href(record: WebhookRecord) -> str:
    return f"{base_path(str(record.project), str(record.integration))}/{record.id}"


def resource_of(record: WebhookRecord) -> str:
    return f"proj/{record.project}:integration/{record.id}"


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise NotFound(f"no integration kind {kind[:64]!r}: use {' or '.join(KINDS)}")
    return kind


def check_config(value: Any, path: str) -> JsonObject:
    """`{url, secret?}`: where to post, and (generic only) the key of `X-LD-Signature`."""
    if not isinstance(value, dict):
        raise ValidationError("config must be an object {url, secret?}", path=path)
    for name in value:
        if name not in ("url", "secret"):
            raise ValidationError(f"unknown config field {name!r}", path=f"{path}/{name}")
    if "url" not in value:
        raise ValidationError("config.url is required", path=f"{path}/url")
    config: JsonObject = {"url": receivers.check_url(value["url"], f"{path}/url")}
    if value.get("secret") is not None:
        config["secret"] = receivers.check_secret(value["secret"], f"{path}/secret")
    return config


EDITABLE: dict[str, field.Rule] = {
    "name": receivers.check_optional_name,
    "on": field.check_bool,
    "tags": field.check_tags,
    "statements": receivers.check_statements,
    "config": check_config,
}


def audited(record: WebhookRecord) -> JsonObject:
    """What the audit log keeps: everything but the URL's and the secret's values."""
    return {
        "_id": record.id,
        "kind": record.integration,
        "projectKey": record.project,
        "name": record.doc.get("name"),
        "on": record.on,
        "tags": list(record.doc.get("tags", [])),
        "statements": list(record.doc.get("statements", [])),
        "config": dict.fromkeys(record.doc["config"], MASK),
    }


def represent(uow: UnitOfWork, record: WebhookRecord, actor: Actor, now_ms: int) -> JsonObject:
    body = audited(record)
    if actor.may("admin", project=record.project):
        body["config"] = dict(record.doc["config"])
    return {
        "_links": {
            "self": {"href": href(record), "type": "application/json"},
            "deliveries": {"href": f"{href(record)}/deliveries", "type": "application/json"},
        },
        **body,
        "_status": receivers.status_json(uow, record, now_ms),
    }


def stored_doc(values: JsonObject) -> JsonObject:
    return {
        "name": values.get("name"),
        "tags": values.get("tags", []),
        "statements": values.get("statements", []),
        "config": values["config"],
    }


def found(uow: UnitOfWork, project: str, kind: str, integration_id: str) -> WebhookRecord:
    record = receivers.existing(uow, integration_id, integration=True)
    if (record.project, record.integration) != (project, kind):
        raise NotFound(f"no {kind} integration {integration_id[:64]!r} in project {project!r}")
    return record


def audit(tx: Transaction, action: str, record: WebhookRecord, **fields: Any) -> None:
    tx.audit(kind="integration", resource=resource_of(record), action=action, **fields)


def create_integration(
    plane: ControlPlane, actor: Actor, project: str, kind: str, body: Any
) -> JsonObject:
    check_kind(kind)
    authorize(actor, "admin", project=project)
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object", path="/")
    for name in body:
        if name not in EDITABLE:
            raise ValidationError(f"unknown integration field {name!r}", path=f"/{name}")
    if "config" not in body:
        raise ValidationError("config {url} is required", path="/config")
    values = {name: EDITABLE[name](value, f"/{name}") for name, value in body.items()}
    if kind == "slack" and "secret" in values["config"]:
        raise ValidationError("Slack's incoming webhooks take no secret", path="/config/secret")
    with plane.write(actor) as tx:
        if tx.uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        record = WebhookRecord(
            id=new_id(),
            integration=kind,
            project=project,
            on=values.get("on", True),
            created=tx.now,
            doc=stored_doc(values),
        )
        tx.uow.webhooks.add(record)
        audit(tx, "createIntegration", record, after=audited(record))
        return represent(tx.uow, record, actor, epoch_millis(tx.now))


def list_integrations(plane: ControlPlane, actor: Actor, project: str, kind: str) -> JsonObject:
    check_kind(kind)
    authorize(actor, "reader", project=project)
    now_ms = epoch_millis(plane.clock())
    with plane.read() as uow:
        items = [
            represent(uow, record, actor, now_ms)
            for record in uow.webhooks.list()
            if (record.project, record.integration) == (project, kind)
        ]
    return {
        "items": items,
        "totalCount": len(items),
        "_links": {"self": {"href": base_path(project, kind), "type": "application/json"}},
    }


def get_integration(
    plane: ControlPlane, actor: Actor, project: str, kind: str, integration_id: str
) -> JsonObject:
    authorize(actor, "reader", project=project)
    with plane.read() as uow:
        record = found(uow, project, check_kind(kind), integration_id)
        return represent(uow, record, actor, epoch_millis(plane.clock()))


def patch_integration(
    plane: ControlPlane, actor: Actor, project: str, kind: str, integration_id: str, body: Any
) -> JsonObject:
    """A JSON Patch (or merge patch) of `name`, `on`, `tags`, `statements`, `config`, checked
    whole: a bad value changes nothing."""
    authorize(actor, "admin", project=project)
    with plane.write(actor) as tx:
        record = found(tx.uow, project, check_kind(kind), integration_id)
        before: JsonObject = {"_id": record.id, "on": record.on, **record.doc}
        if before.get("name") is None:
            del before["name"]
        result = field.patch_fields(
            before,
            body,
            editable=EDITABLE,
            read_only=("_id",),
            required=("on", "config"),
            noun="integration",
        )
        if kind == "slack" and "secret" in result.values["config"]:
            raise ValidationError("Slack's incoming webhooks take no secret", path="/config/secret")
        updated = replace(record, on=result.values["on"], doc=stored_doc(result.values))
        tx.uow.webhooks.replace(updated)
        audit(
            tx,
            "updateIntegration",
            updated,
            comment=result.comment,
            before=audited(record),
            after=audited(updated),
        )
        return represent(tx.uow, updated, actor, epoch_millis(tx.now))


def delete_integration(
    plane: ControlPlane, actor: Actor, project: str, kind: str, integration_id: str
) -> None:
    authorize(actor, "admin", project=project)
    with plane.write(actor) as tx:
        record = found(tx.uow, project, check_kind(kind), integration_id)
        tx.uow.webhooks.delete(record.id)
        audit(tx, "deleteIntegration", record, before=audited(record))


def list_deliveries(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    kind: str,
    integration_id: str,
    *,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[list[JsonObject], int]:
    authorize(actor, "reader", project=project)
    wanted: DeliveryStatus | None = receivers.check_status_filter(status)
    with plane.read() as uow:
        record = found(uow, project, check_kind(kind), integration_id)
        return receivers.delivery_page(
            uow, record, href(record), status=wanted, limit=limit, offset=offset
        )
