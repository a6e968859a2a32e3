"""Reviewing and applying approval requests (`.../reviews`, `.../apply`). A review is
`approve`, `decline` or `comment`; a requester may approve or decline their own request only
where `canReviewOwnRequest` allows. Applying checks, in the transaction that applies, that the
reviews allow it and that nothing the instructions touch changed since the request was
reviewed (409, nothing applied); then the instructions go through the one edit path of flags
and segments, or, with an `executionDate`, become a scheduled change. No HTTP and no SQL here.
"""

from __future__ import annotations

from dataclasses import replace

from flagstaff_server.domain.approval_request import (
    ResourceId,
    parse_apply_body,
    parse_review_body,
    refusal_to_apply,
)
from flagstaff_server.domain.approval_settings import ApprovalSettings, settings_of
from flagstaff_server.domain.scheduled_change import conflicts_with
from flagstaff_server.errors import Conflict, Forbidden, ValidationError
from flagstaff_server.services import flags, scheduled_change_checks, scheduled_changes, segments
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.approval_gate import approved_in
from flagstaff_server.services.approval_ports import ApprovalRequestRecord, ApprovalStatus
from flagstaff_server.services.approval_requests import (
    audit,
    existing,
    present,
    raise_unless_pending,
    stale_conflicts,
)
from flagstaff_server.services.edit import EditRequest, SemanticPatch
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject
from flagstaff_server.services.race import retry_lost_races


def settings_for(tx: Transaction, record: ApprovalRequestRecord) -> ApprovalSettings:
    environment = tx.uow.environments.get(record.project, record.environment)
    return settings_of(environment.doc if environment else {}, record.kind)


def review(
    plane: ControlPlane, actor: Actor, request_id: str, body: object, *, where: ResourceId | None
) -> JsonObject:
    with plane.write(actor) as tx:
        record = existing(tx.uow, request_id, where=where)
        authorize(actor, "writer", project=record.project, environment=record.environment)
        kind, comment = parse_review_body(body)
        raise_unless_pending(record, doing="reviewed")
        own = actor.token_id == record.doc["requestor"]["tokenId"]
        if own and kind != "comment" and not settings_for(tx, record).can_review_own_request:
            raise Forbidden(
                f"the requester may not {kind} their own request in environment "
                f"{record.environment!r} (approvalSettings.canReviewOwnRequest is false)"
            )
        entry: JsonObject = {
            "_id": new_id(),
            "kind": kind,
            "creationDate": epoch_millis(tx.now),
            "reviewerId": actor.token_id,
            "reviewerName": actor.name,
        }
        if comment is not None:
            entry["comment"] = comment
        doc = {**record.doc, "reviews": [*record.doc["reviews"], entry]}
        updated = replace(record, version=record.version + 1, doc=doc)
        tx.uow.approval_requests.replace(updated, expected_version=record.version)
        audit(tx, record, "reviewApprovalRequest", comment=comment, before=record, after=updated)
        return present(tx, updated)


def apply(
    plane: ControlPlane, actor: Actor, request_id: str, body: object, *, where: ResourceId | None
) -> JsonObject:
    """Apply an approved request, all or nothing (a lost race with a concurrent writer of the
    resource is tried again from the start, conflict check included)."""
    comment = parse_apply_body(body)

    def attempt() -> JsonObject:
        with plane.write(actor) as tx:
            return applied(tx, request_id, comment=comment, where=where)

    return retry_lost_races(attempt)


def applied(
    tx: Transaction, request_id: str, *, comment: str | None, where: ResourceId | None
) -> JsonObject:
    record = existing(tx.uow, request_id, where=where)
    authorize(tx.actor, "writer", project=record.project, environment=record.environment)
    raise_unless_pending(record, doing="applied")
    refusal = refusal_to_apply(record.doc["reviews"], settings_for(tx, record))
    if refusal is not None:
        raise Conflict(
            f"approval request {record.id!r} cannot be applied: {refusal}", path="/reviewStatus"
        )
    stale = stale_conflicts(tx.uow, record)
    if stale:
        raise Conflict(
            f"approval request {record.id!r} conflicts with the {record.kind} as it is now: "
            f"{stale[0]['reason']}; nothing was applied (edit the request's instructions to "
            "review it again against the current version)",
            path=stale[0].get("path", "/instructions"),
        )
    doc = dict(record.doc)
    doc.update(appliedDate=epoch_millis(tx.now), appliedBy=tx.actor.token_id)
    if comment is not None:
        doc["applyComment"] = comment
    execution = record.doc.get("executionDate")
    if execution is not None:
        doc["scheduledChangeId"] = schedule(tx, record, int(execution))
        status: ApprovalStatus = "scheduled"
    else:
        change(tx, record, comment=comment)
        status = "completed"
    updated = replace(record, status=status, version=record.version + 1, doc=doc)
    tx.uow.approval_requests.replace(updated, expected_version=record.version)
    audit(tx, record, "applyApprovalRequest", comment=comment, before=record, after=updated)
    return present(tx, updated)


def edit_request(record: ApprovalRequestRecord, comment: str | None) -> EditRequest:
    instructions = record.doc["instructions"]
    said = comment or record.doc.get("comment") or record.doc["description"]
    text = f"{said} (approval request {record.id})"
    body: JsonObject = {
        "comment": text,
        "instructions": instructions,
        "approvalRequestId": record.id,
    }
    environment_key = record.environment if record.kind == "flag" else None
    if environment_key is not None:
        body["environmentKey"] = environment_key
    return EditRequest(
        edit=SemanticPatch(instructions=instructions, environment_key=environment_key),
        comment=text,
        body=body,
    )


def change(tx: Transaction, record: ApprovalRequestRecord, *, comment: str | None) -> None:
    """Apply the instructions now, through the resource's one edit path, the request's
    environment cleared by the approval."""
    request = edit_request(record, comment)
    clearance = approved_in(record.environment)
    if record.kind == "flag":
        flags.edit_flag(tx, record.project, record.key, request, clearance=clearance)
    else:
        segments.edit_segment(
            tx, record.project, record.environment, record.key, request, clearance=clearance
        )


def schedule(tx: Transaction, record: ApprovalRequestRecord, execution_ms: int) -> str:
    """Turn the approved request into a scheduled change (flags only: LaunchDarkly schedules
    flags); refused when its time has passed or another pending change touches the same part."""
    if record.kind != "flag":
        raise ValidationError("segments have no scheduled changes", path="/executionDate")
    if execution_ms < epoch_millis(tx.now):
        raise ValidationError(
            f"'executionDate' {execution_ms} has passed (now is {epoch_millis(tx.now)}); edit "
            "the request's execution date (updateApprovalRequestExecutionDate) and have it "
            "reviewed again",
            path="/executionDate",
        )
    instructions = record.doc["instructions"]
    others = scheduled_change_checks.others_of(tx.uow, record.project, record.key)
    conflicts = conflicts_with(instructions, record.environment, others)
    if conflicts:
        raise Conflict(
            f"approval request {record.id!r} cannot be scheduled: {conflicts[0]['reason']}; "
            "nothing was applied",
            path="/instructions",
        )
    scheduled = scheduled_changes.schedule(
        tx,
        project=record.project,
        flag=record.key,
        environment=record.environment,
        execution_ms=execution_ms,
        instructions=instructions,
        comment=record.doc.get("comment") or record.doc["description"],
        origin={"kind": "approvalRequest", "_id": record.id},
        clearance=approved_in(record.environment),
    )
    return scheduled.id
