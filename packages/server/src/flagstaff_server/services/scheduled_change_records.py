"""What a scheduled change is outside its use cases: its audit kind and resource, its API path,
the author it keeps (the worker applies it on the author's behalf) and LaunchDarkly's
representation of it. No I/O."""

from __future__ import annotations

from flagstaff_server.services.access import Actor
from flagstaff_server.services.plane import epoch_millis
from flagstaff_server.services.ports import (
    JsonObject,
    Role,
    ScheduledChangeRecord,
    ScheduledChangeStatus,
)

AUDIT_KIND = "scheduledChange"
"""The kind of the audit entries of scheduled changes; their resource is the flag's in the
change's environment, so a policy on `proj/*:env/production:flag/*` covers them."""
STATUSES: tuple[ScheduledChangeStatus, ...] = ("pending", "executed", "failed")


def collection_path(project: str, flag: str, environment: str) -> str:
    return f"/api/v2/projects/{project}/flags/{flag}/environments/{environment}/scheduled-changes"


def resource_of(project: str, flag: str, environment: str) -> str:
    """The audit log's resource: the flag in the change's environment."""
    return f"proj/{project}:env/{environment}:flag/{flag}"


# who scheduled it -----------------------------------------------------------------------------


def maintainer_of(actor: Actor) -> JsonObject:
    """What the change keeps of its author: the worker applies it on the author's behalf."""
    return {
        "tokenId": actor.token_id,
        "name": actor.name,
        "role": actor.role,
        "project": actor.project,
        "environment": actor.environment,
    }


def stored_actor(record: ScheduledChangeRecord) -> Actor:
    maintainer = record.doc["maintainer"]
    role: Role = maintainer["role"]
    return Actor(
        token_id=maintainer["tokenId"],
        name=maintainer["name"],
        role=role,
        project=maintainer.get("project"),
        environment=maintainer.get("environment"),
    )


# representation -------------------------------------------------------------------------------


def present(
    record: ScheduledChangeRecord, *, conflicts: list[JsonObject] | None = None
) -> JsonObject:
    """LaunchDarkly's `FeatureFlagScheduledChange`, with Flagstaff's `_status` and, once run,
    `_executedDate`, `_lateByMillis` (how long after `executionDate` it ran) or `_error`."""
    doc = record.doc
    base = collection_path(record.project, record.flag, record.environment)
    body: JsonObject = {
        "_id": record.id,
        "_creationDate": epoch_millis(record.created),
        "_maintainerId": doc["maintainer"]["tokenId"],
        "_maintainer": {"name": doc["maintainer"]["name"]},
        "_version": record.version,
        "executionDate": epoch_millis(record.execution),
        "instructions": doc["instructions"],
        "conflicts": conflicts or [],
        "_status": record.status,
        "_links": {
            "self": {"href": f"{base}/{record.id}", "type": "application/json"},
            "parent": {"href": base, "type": "application/json"},
        },
    }
    if doc.get("comment") is not None:
        body["comment"] = doc["comment"]
    if doc.get("origin") is not None:
        body["_origin"] = doc["origin"]
    for field in ("executedDate", "lateByMillis", "error"):
        if field in doc:
            body[f"_{field}"] = doc[field]
    return body
