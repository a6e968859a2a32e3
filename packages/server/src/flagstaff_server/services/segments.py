"""Segment use cases: list, read, create, patch and delete the segments of one environment.

Same shape as the flag use cases: one transaction per write with compare-and-set on `version`, an
audit entry and a change record carrying the SDK segment (None when deleted). No HTTP, no SQL.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from flagstaff_server.domain import (
    apply_segment_json_patch,
    apply_segment_merge_patch,
    apply_segment_semantic_patch,
    bump_segment_version,
    new_segment_document,
    present_segment,
    to_sdk_segment,
    validate_segment_document,
)
from flagstaff_server.errors import AlreadyExists, LostRace, NotFound, VersionConflict
from flagstaff_server.services import flag_listing
from flagstaff_server.services.access import Actor
from flagstaff_server.services.approval_gate import DIRECT, Clearance, check_change
from flagstaff_server.services.edit import EditRequest, JsonPatch, MergePatch
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis
from flagstaff_server.services.ports import JsonObject, SegmentRecord, UnitOfWork
from flagstaff_server.services.race import retry_lost_races

DEFAULT_LIMIT = 20


def new_segment_id() -> str:
    return str(uuid.uuid4())


def resource_of(project: str, environment: str, key: str) -> str:
    return f"proj/{project}:env/{environment}:segment/{key}"


def check_environment(uow: UnitOfWork, project: str, environment: str) -> None:
    if uow.environments.get(project, environment) is None:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        raise NotFound(f"no environment {environment!r} in project {project!r}")


def get_record(
    uow: UnitOfWork, project: str, environment: str, key: str, *, for_update: bool = False
) -> SegmentRecord:
    """The stored segment; `for_update` as for flags."""
    record = uow.segments.get(project, environment, key, for_update=for_update)
    if record is None:
        check_environment(uow, project, environment)
        raise NotFound(f"no segment {key!r} in {project}/{environment}")
    return record


def list_segments(
    plane: ControlPlane,
    project: str,
    environment: str,
    *,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
) -> JsonObject:
    with plane.read() as uow:
        check_environment(uow, project, environment)
        records = uow.segments.list(project, environment)
    base = f"/api/v2/segments/{project}/{environment}"
    return {
        "items": [
            present_segment(record.doc, project_key=project, environment_key=environment)
            for record in records[offset : offset + limit]
        ],
        "totalCount": len(records),
        "_links": flag_listing.page_links(base, limit, offset, len(records)),
    }


def get_segment(plane: ControlPlane, project: str, environment: str, key: str) -> JsonObject:
    with plane.read() as uow:
        record = get_record(uow, project, environment, key)
    return present_segment(record.doc, project_key=project, environment_key=environment)


def announce(tx: Transaction, project: str, environment: str, document: JsonObject) -> None:
    tx.change(
        project=project,
        environment=environment,
        kind="segment",
        key=str(document["key"]),
        version=int(document["version"]),
        item=to_sdk_segment(document),
    )


def create_segment(
    plane: ControlPlane, actor: Actor, project: str, environment: str, body: object
) -> JsonObject:
    with plane.write(actor) as tx:
        check_environment(tx.uow, project, environment)
        document = new_segment_document(body, now_ms=epoch_millis(tx.now), new_id=new_segment_id)
        key = str(document["key"])
        if tx.uow.segments.get(project, environment, key) is not None:
            raise AlreadyExists(f"a segment with key {key!r} already exists", path="/key")
        validate_segment_document(document)
        tx.uow.segments.add(
            SegmentRecord(
                project=project, environment=environment, key=key, version=1, doc=document
            )
        )
        tx.audit(
            kind="segment",
            resource=resource_of(project, environment, key),
            action="createSegment",
            after=document,  # the body made it: kept once, as the document
        )
        announce(tx, project, environment, document)
    return present_segment(document, project_key=project, environment_key=environment)


def edited_document(tx: Transaction, record: SegmentRecord, request: EditRequest) -> JsonObject:
    edit = request.edit
    if isinstance(edit, JsonPatch):
        return apply_segment_json_patch(record.doc, edit.operations, new_id=new_segment_id)
    if isinstance(edit, MergePatch):
        return apply_segment_merge_patch(record.doc, edit.merge, new_id=new_segment_id)
    result = apply_segment_semantic_patch(
        record.doc, edit.instructions, now_ms=epoch_millis(tx.now), new_id=new_segment_id
    )
    return result.document


def patch_segment(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    environment: str,
    key: str,
    request: EditRequest,
    *,
    clearance: Clearance = DIRECT,
) -> JsonObject:
    """Apply one PATCH all-or-nothing; a stale `expected_version` or `/version` test is a 409.
    A write that loses to a concurrent one is re-applied to the winner's state."""

    def attempt() -> JsonObject:
        with plane.write(actor) as tx:
            return edit_segment(tx, project, environment, key, request, clearance=clearance)

    return retry_lost_races(attempt)


def edit_segment(
    tx: Transaction,
    project: str,
    environment: str,
    key: str,
    request: EditRequest,
    *,
    clearance: Clearance = DIRECT,
) -> JsonObject:
    """The one path every edit of a segment takes (a PATCH, an applied approval request),
    inside the caller's transaction, as `flags.edit_flag`; returns the segment as presented."""
    record = get_record(tx.uow, project, environment, key, for_update=True)
    if request.expected_version is not None and request.expected_version != record.version:
        raise VersionConflict(
            f"segment {key!r} is at version {record.version}, not {request.expected_version}",
            path="/version",
        )
    after = edited_document(tx, record, request)
    validate_segment_document(after)
    bump = bump_segment_version(record.doc, after, epoch_millis(tx.now))
    document = bump.document
    if not bump.changed:
        return present_segment(record.doc, project_key=project, environment_key=environment)
    check_segment_change(
        tx, record, after, comment=request.comment, clearance=clearance, comment_required=True
    )
    store_segment(tx, record, replace(record, version=int(document["version"]), doc=document))
    tx.audit(
        kind="segment",
        resource=resource_of(project, environment, key),
        action="updateSegment",
        comment=request.comment,
        patch=request.body,
        before=record.doc,
        after=document,
    )
    announce(tx, project, environment, document)
    return present_segment(document, project_key=project, environment_key=environment)


def check_segment_change(
    tx: Transaction,
    record: SegmentRecord,
    after: JsonObject,
    *,
    comment: str | None,
    clearance: Clearance,
    comment_required: bool,
) -> None:
    """The approval and comment rules of the segment's environment (its tags before and after
    both count, as for flags)."""
    check_change(
        tx,
        kind="segment",
        project=record.project,
        key=record.key,
        environments=(record.environment,),
        tags={*record.doc.get("tags", []), *after.get("tags", [])},
        comment=comment,
        clearance=clearance,
        resource_of=lambda environment: resource_of(record.project, environment, record.key),
        comment_required=comment_required,
    )


def store_segment(tx: Transaction, existing: SegmentRecord, record: SegmentRecord) -> None:
    """Compare-and-set an edited segment; losing to a concurrent writer is a `LostRace`."""
    try:
        tx.uow.segments.replace(record, expected_version=existing.version)
    except VersionConflict as exc:
        raise LostRace(f"segment {record.key!r} changed while this edit was applied") from exc


def delete_segment(
    plane: ControlPlane, actor: Actor, project: str, environment: str, key: str
) -> None:
    retry_lost_races(lambda: try_delete_segment(plane, actor, project, environment, key))


def try_delete_segment(
    plane: ControlPlane, actor: Actor, project: str, environment: str, key: str
) -> None:
    with plane.write(actor) as tx:
        record = get_record(tx.uow, project, environment, key, for_update=True)
        # DELETE carries no comment: the request itself is the record (docs/workflows.md)
        check_segment_change(
            tx, record, record.doc, comment=None, clearance=DIRECT, comment_required=False
        )
        try:
            tx.uow.segments.delete(project, environment, key, expected_version=record.version)
        except VersionConflict as exc:
            raise LostRace(f"segment {key!r} changed while it was deleted") from exc
        tx.audit(
            kind="segment",
            resource=resource_of(project, environment, key),
            action="deleteSegment",
            before=record.doc,
        )
        tx.change(
            project=project,
            environment=environment,
            kind="segment",
            key=key,
            version=record.version + 1,
            item=None,
        )
