"""Approval-request use cases: create, list, read, edit and delete the requests to change one
flag (LaunchDarkly's `/projects/{p}/flags/{f}/environments/{e}/approval-requests`) or one
segment (`/approval-requests` with a `resourceId`) in one environment. Reviewing and applying
them is `services.approval_reviews`.

A request's instructions are checked when it is made or edited exactly as a semantic PATCH
would check them now, except that the request's own environment counts as approved; the state
of the resource they were checked against is kept (`base`), so applying can tell what changed
under them since. No HTTP and no SQL here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.domain import validate_segment_document
from flagstaff_server.domain.approval_conflict import stale_parts
from flagstaff_server.domain.approval_request import (
    RequestBody,
    ResourceId,
    parse_request_body,
    parse_request_patch,
    parse_resource_id,
    review_status,
)
from flagstaff_server.domain.approval_settings import settings_of
from flagstaff_server.domain.scheduled_change import overlaps, touched_part
from flagstaff_server.errors import Conflict, Forbidden, NotFound, ValidationError
from flagstaff_server.services import segments
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.approval_gate import approved_in
from flagstaff_server.services.approval_ports import ApprovalRequestRecord
from flagstaff_server.services.edit import EditRequest, SemanticPatch
from flagstaff_server.services.flags import get_flag_in
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork
from flagstaff_server.services.scheduled_change_checks import check_instructions_now, others_of
from flagstaff_server.services.scheduled_change_records import maintainer_of

AUDIT_KIND = "approvalRequest"
GENERIC_PATH = "/api/v2/approval-requests"


def resource_of(record: ApprovalRequestRecord) -> str:
    """The audit log's resource (and LaunchDarkly's `resourceId`): the flag or segment in the
    request's environment, so flag and segment policies cover approval requests."""
    return ResourceId(
        kind=record.kind, project=record.project, environment=record.environment, key=record.key
    ).text


def self_path(record: ApprovalRequestRecord) -> str:
    if record.kind == "segment":
        return f"{GENERIC_PATH}/{record.id}"
    return (
        f"/api/v2/projects/{record.project}/flags/{record.key}/environments/"
        f"{record.environment}/approval-requests/{record.id}"
    )


# the resource ---------------------------------------------------------------------------------


def resource_doc(uow: UnitOfWork, kind: str, project: str, environment: str, key: str) -> Any:
    """The flag's or segment's stored document (404 when it or the environment is missing)."""
    if kind == "flag":
        return get_flag_in(uow, project, key, environment).doc
    return segments.get_record(uow, project, environment, key).doc


def resource_version(kind: str, doc: JsonObject) -> int:
    return int(doc["_version"] if kind == "flag" else doc["version"])


def check_against_now(
    tx: Transaction,
    record: ApprovalRequestRecord,
    instructions: list[dict[str, Any]],
    *,
    path: str = "/instructions",
    comment: str | None,
) -> JsonObject:
    """Raise what a semantic PATCH with `instructions` would raise now, the request's own
    environment counting as approved; returns the resource's document it was checked against."""
    project, environment, key = record.project, record.environment, record.key
    if record.kind == "flag":
        flag = get_flag_in(tx.uow, project, key, environment)
        check_instructions_now(
            tx,
            flag,
            instructions,
            environment,
            path=path,
            comment=comment,
            clearance=approved_in(environment),
        )
        return flag.doc
    segment = segments.get_record(tx.uow, project, environment, key)
    request = EditRequest(
        edit=SemanticPatch(instructions=instructions, environment_key=None),
        comment=comment,
        body={"instructions": instructions},
    )
    try:
        validate_segment_document(segments.edited_document(tx, segment, request))
    except ValidationError as exc:
        if exc.path and exc.path.startswith("/instructions") and path != "/instructions":
            raise ValidationError(exc.message, path=path + exc.path[13:]) from None
        raise
    return segment.doc


def require_comment_if_asked(uow: UnitOfWork, record: ApprovalRequestRecord, comment: Any) -> None:
    environment = uow.environments.get(record.project, record.environment)
    required = environment is not None and environment.doc.get("requireComments")
    if required and not (comment or "").strip():
        raise ValidationError(
            f"environment {record.environment!r} requires a comment on every change, "
            "approval requests included",
            path="/comment",
        )


# representation -------------------------------------------------------------------------------


def present_review(review: JsonObject) -> JsonObject:
    body: JsonObject = {
        "_id": review["_id"],
        "kind": review["kind"],
        "creationDate": review["creationDate"],
        "memberId": review["reviewerId"],
        "_reviewer": {"name": review["reviewerName"]},
    }
    if review.get("comment") is not None:
        body["comment"] = review["comment"]
    return body


def shown_status(uow: UnitOfWork, record: ApprovalRequestRecord) -> str:
    """A scheduled request follows its scheduled change: completed once it ran, failed if it
    failed."""
    if record.status != "scheduled":
        return record.status
    change = uow.scheduled_changes.get(str(record.doc.get("scheduledChangeId")))
    if change is None or change.status == "pending":
        return "scheduled"
    return "completed" if change.status == "executed" else "failed"


def present(tx: Transaction, record: ApprovalRequestRecord) -> JsonObject:
    """LaunchDarkly's `FlagConfigApprovalRequestResponse` (with `resourceId`, as the generic
    `ApprovalRequestResponse`), and Flagstaff's `_requestor`, `_voidedReviews` and, when applied
    with an `executionDate`, `_scheduledChangeId`."""
    doc = record.doc
    environment = tx.uow.environments.get(record.project, record.environment)
    settings = settings_of(environment.doc if environment else {}, record.kind)
    href = self_path(record)
    body: JsonObject = {
        "_id": record.id,
        "_version": record.version,
        "creationDate": epoch_millis(record.created),
        "serviceKind": "launchdarkly",
        "requestorId": doc["requestor"]["tokenId"],
        "_requestor": {"name": doc["requestor"]["name"]},
        "description": doc["description"],
        "reviewStatus": review_status(doc["reviews"], settings),
        "allReviews": [present_review(review) for review in doc["reviews"]],
        "notifyMemberIds": doc.get("notifyMemberIds", []),
        "status": shown_status(tx.uow, record),
        "instructions": doc["instructions"],
        "conflicts": current_conflicts(tx, record),
        "resourceId": resource_of(record),
        "_links": {
            "self": {"href": href, "type": "application/json"},
            "apply": {"href": f"{href}/apply", "type": "application/json"},
            "reviews": {"href": f"{href}/reviews", "type": "application/json"},
        },
    }
    for field in ("comment", "executionDate", "appliedDate"):
        if doc.get(field) is not None:
            body[field] = doc[field]
    if doc.get("appliedBy") is not None:
        body["appliedByServiceTokenId"] = doc["appliedBy"]
    if doc.get("scheduledChangeId") is not None:
        body["_scheduledChangeId"] = doc["scheduledChangeId"]
    if doc.get("voidedReviews"):
        body["_voidedReviews"] = [present_review(review) for review in doc["voidedReviews"]]
    return body


# conflicts ------------------------------------------------------------------------------------


def stale_conflicts(uow: UnitOfWork, record: ApprovalRequestRecord) -> list[JsonObject]:
    """Instructions whose part of the resource changed since the request was made or edited."""
    try:
        current = resource_doc(uow, record.kind, record.project, record.environment, record.key)
    except NotFound:
        return [
            {
                "instruction": record.doc["instructions"][0],
                "reason": f"the {record.kind} {record.key!r} no longer exists",
            }
        ]
    base = record.doc["base"]
    instructions = record.doc["instructions"]
    return [
        {
            "instruction": instructions[index],
            "reason": f"the {record.kind}'s {part} changed since the request was made (version "
            f"{resource_version(record.kind, base)}, now {resource_version(record.kind, current)})",
            "path": f"/instructions/{index}",
        }
        for index, part in stale_parts(record.kind, base, current, instructions, record.environment)
    ]


def peer_conflicts(uow: UnitOfWork, record: ApprovalRequestRecord) -> list[JsonObject]:
    """Instructions touching what another pending request or scheduled change of the flag
    touches too (reported, not refused: whichever is applied first makes the other stale)."""
    if record.kind != "flag":
        return []
    peers: list[tuple[str, str, list[dict[str, Any]]]] = [
        (f"approval request {other.id}", other.environment, other.doc["instructions"])
        for other in uow.approval_requests.list(project=record.project, kind="flag", key=record.key)
        if other.id != record.id and other.status == "pending"
    ]
    peers += [
        (f"scheduled change {other.id}", other.environment, list(other.instructions))
        for other in others_of(uow, record.project, record.key)
    ]
    found: list[JsonObject] = []
    for instruction in record.doc["instructions"]:
        mine = touched_part(instruction, record.environment)
        for name, environment, theirs in peers:
            if any(overlaps(mine, touched_part(item, environment)) for item in theirs):
                found.append(
                    {
                        "instruction": instruction,
                        "reason": f"{instruction.get('kind')} changes what {name} also changes",
                    }
                )
                break
    return found


def current_conflicts(tx: Transaction, record: ApprovalRequestRecord) -> list[JsonObject]:
    if record.status != "pending":
        return []
    return stale_conflicts(tx.uow, record) + peer_conflicts(tx.uow, record)


# lookups --------------------------------------------------------------------------------------


def existing(
    uow: UnitOfWork, request_id: str, *, where: ResourceId | None
) -> ApprovalRequestRecord:
    """The request; with `where`, only if it concerns that flag in that environment."""
    record = uow.approval_requests.get(request_id)
    if where is not None:
        resource_doc(uow, where.kind, where.project, where.environment, where.key)
    if record is None or (
        where is not None
        and (record.kind, record.project, record.environment, record.key)
        != (where.kind, where.project, where.environment, where.key)
    ):
        raise NotFound(f"no approval request {request_id!r}")
    return record


def flag_resource(project: str, flag: str, environment: str) -> ResourceId:
    return ResourceId(kind="flag", project=project, environment=environment, key=flag)


def audit(
    tx: Transaction,
    record: ApprovalRequestRecord,
    action: str,
    *,
    comment: str | None = None,
    before: ApprovalRequestRecord | None = None,
    after: ApprovalRequestRecord | None = None,
) -> None:
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(record),
        action=action,
        comment=comment,
        before=None if before is None else present(tx, before),
        after=None if after is None else present(tx, after),
    )


# use cases ------------------------------------------------------------------------------------


def create(plane: ControlPlane, actor: Actor, where: ResourceId | None, body: object) -> JsonObject:
    """Make a request for `where` (the per-flag route) or for the body's `resourceId`."""
    with plane.write(actor) as tx:
        if where is None:
            if not isinstance(body, dict):
                raise ValidationError("the body must be a JSON object", path="/")
            where = parse_resource_id(body.get("resourceId"))
        authorize(actor, "writer", project=where.project, environment=where.environment)
        request = parse_request_body(body, now_ms=epoch_millis(tx.now))
        if where.kind == "segment" and request.execution_ms is not None:
            raise ValidationError(
                "segments have no scheduled changes: leave 'executionDate' out",
                path="/executionDate",
            )
        record = new_record(tx, where, request)
        base = check_against_now(tx, record, request.instructions, comment=request.comment)
        require_comment_if_asked(tx.uow, record, request.comment)
        record = replace(record, doc={**record.doc, "base": base})
        tx.uow.approval_requests.add(record)
        audit(tx, record, "createApprovalRequest", comment=request.comment, after=record)
        return present(tx, record)


def new_record(tx: Transaction, where: ResourceId, request: RequestBody) -> ApprovalRequestRecord:
    doc: JsonObject = {
        "description": request.description,
        "instructions": request.instructions,
        "notifyMemberIds": request.notify_member_ids,
        "requestor": maintainer_of(tx.actor),
        "reviews": [],
    }
    if request.comment is not None:
        doc["comment"] = request.comment
    if request.execution_ms is not None:
        doc["executionDate"] = request.execution_ms
    return ApprovalRequestRecord(
        id=new_id(),
        project=where.project,
        kind=where.kind,
        key=where.key,
        environment=where.environment,
        created=tx.now,
        doc=doc,
    )


def get(
    plane: ControlPlane, actor: Actor, request_id: str, *, where: ResourceId | None
) -> JsonObject:
    with plane.read() as uow:
        record = existing(uow, request_id, where=where)
        authorize(actor, "reader", project=record.project, environment=record.environment)
        return present(Transaction(uow=uow, actor=actor, now=plane.clock()), record)


def edit(
    plane: ControlPlane, actor: Actor, request_id: str, body: object, *, where: ResourceId | None
) -> JsonObject:
    """Flagstaff's semantic patch of a pending request (its requester's, or an admin's). New
    instructions or a new execution date void the approvals and declines given so far: they
    were given to something else."""
    with plane.write(actor) as tx:
        record = existing(tx.uow, request_id, where=where)
        authorize(actor, "writer", project=record.project, environment=record.environment)
        if actor.token_id != record.doc["requestor"]["tokenId"] and actor.role != "admin":
            raise Forbidden("only the requester (or an admin) may edit an approval request")
        raise_unless_pending(record)
        change = parse_request_patch(body, now_ms=epoch_millis(tx.now))
        doc = dict(record.doc)
        if change.instructions is not None:
            doc["instructions"] = change.instructions
            doc["base"] = check_against_now(
                tx,
                record,
                change.instructions,
                path=change.instructions_path,
                comment=change.comment or doc.get("comment"),
            )
        if change.description is not None:
            doc["description"] = change.description
        if change.execution_ms is not None:
            doc["executionDate"] = change.execution_ms
        if change.clear_execution:
            doc.pop("executionDate", None)
        if change.voids_reviews:
            voided = [r for r in doc["reviews"] if r["kind"] != "comment"]
            doc["voidedReviews"] = [*doc.get("voidedReviews", []), *voided]
            doc["reviews"] = [r for r in doc["reviews"] if r["kind"] == "comment"]
        updated = replace(record, version=record.version + 1, doc=doc)
        tx.uow.approval_requests.replace(updated, expected_version=record.version)
        audit(
            tx,
            record,
            "updateApprovalRequest",
            comment=change.comment,
            before=record,
            after=updated,
        )
        return present(tx, updated)


def raise_unless_pending(record: ApprovalRequestRecord, *, doing: str = "changed") -> None:
    if record.status != "pending":
        raise Conflict(
            f"approval request {record.id!r} has been applied (status {record.status}) and can "
            f"no longer be {doing}",
            path="/status",
        )


def delete(plane: ControlPlane, actor: Actor, request_id: str, *, where: ResourceId | None) -> None:
    """Delete a pending request; an applied one stays as the record of what was approved."""
    with plane.write(actor) as tx:
        record = existing(tx.uow, request_id, where=where)
        authorize(actor, "writer", project=record.project, environment=record.environment)
        raise_unless_pending(record, doing="deleted")
        audit(tx, record, "deleteApprovalRequest", before=record)
        tx.uow.approval_requests.delete(record.id)
