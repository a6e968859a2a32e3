"""Flag trigger use cases: create, list, read, edit and delete the triggers of a flag in one
environment (LaunchDarkly's `/flags/{p}/{f}/triggers/{e}`), and call one (`invoke_trigger`,
behind the unauthenticated `POST /webhook/triggers/{id}/{secret}`).

A trigger's URL carries a random secret (256 bits) that is shown once, when the trigger is made
and when its URL is cycled; only its SHA-256 is stored. A call names the trigger by id and is
refused alike (404) for an unknown id and a wrong secret, so the answer tells a guesser nothing;
missed calls are rate-limited per client address, valid ones per trigger. A disabled trigger,
or one whose URL was cycled, stops working. A call applies the trigger's instruction through
`flags.edit_flag`, the path of a semantic PATCH, and is audit-logged. No HTTP and no SQL here.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import replace
from typing import Any

import orjson

from flagstaff_server.domain.flag_trigger import (
    TriggerEdit,
    parse_trigger_body,
    parse_trigger_patch,
)
from flagstaff_server.errors import Conflict, NotFound
from flagstaff_server.services.access import Actor, authorize, hash_secret
from flagstaff_server.services.approval_gate import PRECLEARED
from flagstaff_server.services.edit import EditRequest, SemanticPatch
from flagstaff_server.services.flags import edit_flag, get_flag_in, preview_edit
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, TriggerRecord, UnitOfWork

TRIGGER_PATH = "/webhook/triggers"
AUDIT_KIND = "flagTrigger"
MASK = "********"
"""What stands for the secret in a trigger's URL once it has been shown."""
RECENT_BODIES = 10
MAX_RECORDED_BODY = 4096
"""A call's JSON body up to this many bytes is kept among the recent ones (larger: the time
only)."""


def collection_path(project: str, flag: str, environment: str) -> str:
    return f"/api/v2/flags/{project}/{flag}/triggers/{environment}"


def resource_of(record: TriggerRecord) -> str:
    return f"proj/{record.project}:env/{record.environment}:flag/{record.flag}"


def trigger_url(base_url: str, record: TriggerRecord, secret: str | None = None) -> str:
    return f"{base_url.rstrip('/')}{TRIGGER_PATH}/{record.id}/{secret or MASK}"


def present(record: TriggerRecord, *, base_url: str, secret: str | None = None) -> JsonObject:
    """LaunchDarkly's `TriggerWorkflowRep`. `triggerURL` holds the secret only when `secret` is
    given (the answers to create and to `cycleTriggerUrl`); otherwise it is masked."""
    doc = record.doc
    base = collection_path(record.project, record.flag, record.environment)
    body: JsonObject = {
        "_id": record.id,
        "_version": record.version,
        "_creationDate": epoch_millis(record.created),
        "_maintainerId": doc["maintainer"]["tokenId"],
        "enabled": record.enabled,
        "_status": "active" if record.enabled else "inactive",
        "_integrationKey": doc["integration"],
        "instructions": doc["instructions"],
        "_triggerCount": doc.get("triggerCount", 0),
        "_recentTriggerBodies": doc.get("recentBodies", []),
        "triggerURL": trigger_url(base_url, record, secret),
        "_links": {
            "self": {"href": f"{base}/{record.id}", "type": "application/json"},
            "parent": {"href": base, "type": "application/json"},
        },
    }
    if doc.get("lastTriggeredAt") is not None:
        body["_lastTriggeredAt"] = doc["lastTriggeredAt"]
    if doc.get("comment") is not None:
        body["comment"] = doc["comment"]
    return body


def audit_view(record: TriggerRecord) -> JsonObject:
    """What the audit log keeps of a trigger: never its secret, masked or not."""
    return present(record, base_url="")


def action_request(record: TriggerRecord, comment: str | None) -> EditRequest:
    instructions = record.doc["instructions"]
    body: JsonObject = {
        "environmentKey": record.environment,
        "instructions": instructions,
        "triggerId": record.id,
    }
    if comment is not None:
        body["comment"] = comment
    return EditRequest(
        edit=SemanticPatch(instructions=instructions, environment_key=record.environment),
        comment=comment,
        body=body,
    )


def existing(
    uow: UnitOfWork, project: str, flag: str, environment: str, trigger_id: str
) -> TriggerRecord:
    get_flag_in(uow, project, flag, environment)
    record = uow.triggers.get(trigger_id)
    if record is None or (record.project, record.flag, record.environment) != (
        project,
        flag,
        environment,
    ):
        raise NotFound(f"no trigger {trigger_id!r} for flag {flag!r} in {environment!r}")
    return record


def audit(tx: Transaction, record: TriggerRecord, action: str, **fields: Any) -> None:
    tx.audit(kind=AUDIT_KIND, resource=resource_of(record), action=action, **fields)


# management ----------------------------------------------------------------------------------


def create_trigger(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    flag: str,
    environment: str,
    body: object,
    *,
    base_url: str,
) -> JsonObject:
    """A new trigger; the answer's `triggerURL` is the only time its secret is shown. Its
    author must be allowed to make its change directly (the environment's approval and comment
    rules included), as a semantic PATCH would check now."""
    authorize(actor, "writer", project=project, environment=environment)
    with plane.write(actor) as tx:
        request = parse_trigger_body(body)
        target = get_flag_in(tx.uow, project, flag, environment)
        secret = secrets.token_urlsafe(32)
        doc: JsonObject = {
            "integration": request.integration,
            "instructions": request.instructions,
            "maintainer": {"tokenId": actor.token_id, "name": actor.name},
        }
        if request.comment is not None:
            doc["comment"] = request.comment
        record = TriggerRecord(
            id=new_id(),
            project=project,
            flag=flag,
            environment=environment,
            secret_hash=hash_secret(secret),
            created=tx.now,
            doc=doc,
        )
        preview_edit(tx, target, action_request(record, request.comment))
        tx.uow.triggers.add(record)
        audit(tx, record, "createTrigger", comment=request.comment, after=audit_view(record))
    return present(record, base_url=base_url, secret=secret)


def list_triggers(
    plane: ControlPlane, project: str, flag: str, environment: str, *, base_url: str
) -> JsonObject:
    with plane.read() as uow:
        get_flag_in(uow, project, flag, environment)
        records = uow.triggers.list(project, flag, environment)
    base = collection_path(project, flag, environment)
    return {
        "items": [present(record, base_url=base_url) for record in records],
        "totalCount": len(records),
        "_links": {"self": {"href": base, "type": "application/json"}},
    }


def get_trigger(
    plane: ControlPlane,
    project: str,
    flag: str,
    environment: str,
    trigger_id: str,
    *,
    base_url: str,
) -> JsonObject:
    with plane.read() as uow:
        record = existing(uow, project, flag, environment, trigger_id)
    return present(record, base_url=base_url)


def update_trigger(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    flag: str,
    environment: str,
    trigger_id: str,
    body: object,
    *,
    base_url: str,
) -> JsonObject:
    """LaunchDarkly's semantic patch of a trigger. `cycleTriggerUrl` makes a new secret (shown
    in this answer only); the old URL stops working at once."""
    authorize(actor, "writer", project=project, environment=environment)
    with plane.write(actor) as tx:
        edit = parse_trigger_patch(body)
        record = existing(tx.uow, project, flag, environment, trigger_id)
        updated, secret = edited(record, edit)
        if edit.instructions is not None:
            target = get_flag_in(tx.uow, project, flag, environment)
            preview_edit(tx, target, action_request(updated, edit.comment))
        tx.uow.triggers.replace(updated, expected_version=record.version)
        audit(
            tx,
            record,
            "updateTrigger",
            comment=edit.comment,
            before=audit_view(record),
            after=audit_view(updated),
        )
    return present(updated, base_url=base_url, secret=secret)


def edited(record: TriggerRecord, edit: TriggerEdit) -> tuple[TriggerRecord, str | None]:
    doc = dict(record.doc)
    if edit.instructions is not None:
        doc["instructions"] = edit.instructions
    secret = secrets.token_urlsafe(32) if edit.cycle else None
    updated = replace(
        record,
        secret_hash=record.secret_hash if secret is None else hash_secret(secret),
        enabled=record.enabled if edit.enabled is None else edit.enabled,
        version=record.version + 1,
        doc=doc,
    )
    return updated, secret


def delete_trigger(
    plane: ControlPlane, actor: Actor, project: str, flag: str, environment: str, trigger_id: str
) -> None:
    authorize(actor, "writer", project=project, environment=environment)
    with plane.write(actor) as tx:
        record = existing(tx.uow, project, flag, environment, trigger_id)
        tx.uow.triggers.delete(record.id)
        audit(tx, record, "deleteTrigger", before=audit_view(record))


# calls ---------------------------------------------------------------------------------------


def trigger_actor(record: TriggerRecord) -> Actor:
    """Whom a call's changes are attributed to: the trigger itself, allowed its one change."""
    return Actor(
        token_id=f"trigger:{record.id}",
        name=f"flag trigger {record.id} ({record.doc['integration']})",
        role="writer",
        project=record.project,
        environment=record.environment,
    )


def recorded_body(body: bytes, at_ms: int) -> JsonObject:
    entry: JsonObject = {"timestamp": at_ms}
    if body and len(body) <= MAX_RECORDED_BODY:
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            return entry
        if isinstance(parsed, dict):
            entry["jsonBody"] = parsed
    return entry


def invoke_trigger(
    plane: ControlPlane, trigger_id: str, secret: str, *, body: bytes, client: str | None
) -> JsonObject:
    """Apply the trigger's instruction. 404 for an unknown trigger or a wrong secret (alike),
    409 for a disabled one, 429 past the rate limits; the flag's own rules (validation, scope)
    as for a PATCH. Answers `{_id, kind, changed, flagVersion}`."""
    throttle = plane.trigger_throttle
    now = plane.clock()
    throttle.check_client(client, now)
    with plane.read() as uow:
        found = uow.triggers.get(trigger_id)
    if found is None or not hmac.compare_digest(found.secret_hash, hash_secret(secret)):
        throttle.missed(client, now)
        raise NotFound("no such trigger")
    if not found.enabled:
        raise Conflict(f"trigger {trigger_id} is disabled")
    throttle.call(trigger_id, now)
    with plane.write(trigger_actor(found)) as tx:
        comment = f"Flag trigger {found.id} ({found.doc['integration']})"
        seq_before = tx.last_seq
        # the flag's row is held from here on: calls of the flag's triggers queue behind it
        flag = edit_flag(
            tx, found.project, found.flag, action_request(found, comment), clearance=PRECLEARED
        )
        record = tx.uow.triggers.get(trigger_id)
        if record is None or record.secret_hash != found.secret_hash or not record.enabled:
            raise NotFound("no such trigger")  # deleted, cycled or disabled meanwhile
        at_ms = epoch_millis(tx.now)
        doc = dict(record.doc)
        doc["triggerCount"] = int(doc.get("triggerCount", 0)) + 1
        doc["lastTriggeredAt"] = at_ms
        doc["recentBodies"] = [recorded_body(body, at_ms), *doc.get("recentBodies", [])][
            :RECENT_BODIES
        ]
        # calls are not edits: the trigger's `_version` stays
        tx.uow.triggers.replace(replace(record, doc=doc), expected_version=record.version)
        changed = tx.last_seq > seq_before  # the edit announced a change to delivery
        audit(tx, record, "invokeTrigger", comment=comment)
    return {
        "_id": trigger_id,
        "kind": found.doc["instructions"][0]["kind"],
        "flagVersion": flag["_version"],
        "changed": changed,
    }
