"""Scheduled-change use cases: create, list, read, edit and delete the changes scheduled for a
flag in one environment (LaunchDarkly's
`/projects/{p}/flags/{f}/environments/{e}/scheduled-changes`).

Instructions are checked when a change is scheduled or edited exactly as a semantic PATCH would
check them now (`flags.preview_edit`, the environment's approval and comment rules included),
and again when the worker applies them (`scheduled_change_runs`). Conflicts are reported, never
resolved silently: with other pending changes of the flag (a 400 unless `ignoreConflicts`),
and, when read, with the flag as it is now.
`schedule` is the function other workflows call inside their own transaction (an approved
request with an `executionDate`). The checks live in `scheduled_change_checks`, the record's
representation and author in `scheduled_change_records`. No HTTP and no SQL here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.domain.scheduled_change import (
    ScheduleEdit,
    conflicts_with,
    parse_schedule_body,
    parse_schedule_patch,
)
from flagstaff_server.errors import Conflict, NotFound
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.approval_gate import DIRECT, Clearance
from flagstaff_server.services.flags import get_flag_in
from flagstaff_server.services.plane import (
    ControlPlane,
    Transaction,
    epoch_millis,
    from_epoch_millis,
    new_id,
)
from flagstaff_server.services.ports import (
    JsonObject,
    ScheduledChangeRecord,
    ScheduledChangeStatus,
    UnitOfWork,
)
from flagstaff_server.services.scheduled_change_checks import (
    check_instructions_now,
    current_conflicts,
    others_of,
    refuse_conflicts,
)
from flagstaff_server.services.scheduled_change_records import (
    AUDIT_KIND,
    collection_path,
    maintainer_of,
    present,
    resource_of,
)


def existing(
    uow: UnitOfWork, project: str, flag: str, environment: str, change_id: str
) -> ScheduledChangeRecord:
    get_flag_in(uow, project, flag, environment)
    record = uow.scheduled_changes.get(change_id)
    if record is None or (record.project, record.flag, record.environment) != (
        project,
        flag,
        environment,
    ):
        raise NotFound(f"no scheduled change {change_id!r} for flag {flag!r} in {environment!r}")
    return record


# use cases ------------------------------------------------------------------------------------


def schedule(
    tx: Transaction,
    *,
    project: str,
    flag: str,
    environment: str,
    execution_ms: int,
    instructions: list[dict[str, Any]],
    comment: str | None = None,
    ignore_conflicts: bool = False,
    origin: JsonObject | None = None,
    clearance: Clearance = DIRECT,
) -> ScheduledChangeRecord:
    """Schedule `instructions` for the flag in `environment` at `execution_ms`, on behalf of
    `tx.actor`, inside `tx`: checked against the flag now (a 400 naming `/instructions/i/...`)
    and against the flag's other pending changes (a 400 unless `ignore_conflicts`), then stored
    and audited. `origin` says what made it (an approval request: `{"kind", "_id"}`), shown as
    `_origin`. `clearance` says what the change has been through (an approval request that
    was approved: `approval_gate.approved_in(environment)`); by default the environment's
    approval and comment rules apply as to a direct change. For callers that parsed their own
    body; the API parses with `domain.scheduled_change`."""
    authorize(tx.actor, "writer", project=project, environment=environment)
    target = get_flag_in(tx.uow, project, flag, environment)
    check_instructions_now(
        tx, target, instructions, environment, comment=comment, clearance=clearance
    )
    conflicts = conflicts_with(instructions, environment, others_of(tx.uow, project, flag))
    if not ignore_conflicts:
        refuse_conflicts(conflicts, instructions, path="/instructions")
    doc: JsonObject = {"instructions": instructions, "maintainer": maintainer_of(tx.actor)}
    if comment is not None:
        doc["comment"] = comment
    if origin is not None:
        doc["origin"] = origin
    record = ScheduledChangeRecord(
        id=new_id(),
        project=project,
        flag=flag,
        environment=environment,
        execution=from_epoch_millis(execution_ms),
        created=tx.now,
        doc=doc,
    )
    tx.uow.scheduled_changes.add(record)
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(project, flag, environment),
        action="createScheduledChange",
        comment=comment,
        after=present(record),
    )
    return record


def create_scheduled_change(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    flag: str,
    environment: str,
    body: object,
    *,
    ignore_conflicts: bool = False,
) -> JsonObject:
    authorize(actor, "writer", project=project, environment=environment)
    with plane.write(actor) as tx:
        request = parse_schedule_body(body, now_ms=epoch_millis(tx.now))
        record = schedule(
            tx,
            project=project,
            flag=flag,
            environment=environment,
            execution_ms=request.execution_ms,
            instructions=request.instructions,
            comment=request.comment,
            ignore_conflicts=ignore_conflicts,
        )
        return present(record, conflicts=current_conflicts(tx, record))


def list_scheduled_changes(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    flag: str,
    environment: str,
    *,
    status: ScheduledChangeStatus | None = "pending",
) -> JsonObject:
    """`{items, totalCount, _links}`: the flag's changes in the environment (pending ones unless
    `status` says otherwise; None: all), soonest first, each with its current conflicts."""
    with plane.read() as uow:
        get_flag_in(uow, project, flag, environment)
        tx = Transaction(uow=uow, actor=actor, now=plane.clock())
        items = [
            present(record, conflicts=current_conflicts(tx, record))
            for record in uow.scheduled_changes.list(
                project, flag, environment=environment, status=status
            )
        ]
    base = collection_path(project, flag, environment)
    return {
        "items": items,
        "totalCount": len(items),
        "_links": {"self": {"href": base, "type": "application/json"}},
    }


def get_scheduled_change(
    plane: ControlPlane, actor: Actor, project: str, flag: str, environment: str, change_id: str
) -> JsonObject:
    with plane.read() as uow:
        record = existing(uow, project, flag, environment, change_id)
        tx = Transaction(uow=uow, actor=actor, now=plane.clock())
        return present(record, conflicts=current_conflicts(tx, record))


def update_scheduled_change(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    flag: str,
    environment: str,
    change_id: str,
    body: object,
    *,
    ignore_conflicts: bool = False,
) -> JsonObject:
    """LaunchDarkly's semantic patch of a pending change; a change that ran (or failed) is a 409.
    New instructions are checked as at creation, and so is a new execution date."""
    authorize(actor, "writer", project=project, environment=environment)
    with plane.write(actor) as tx:
        edit = parse_schedule_patch(body, now_ms=epoch_millis(tx.now))
        record = existing(tx.uow, project, flag, environment, change_id)
        if record.status != "pending":
            raise_not_pending(record)
        if edit.delete:
            remove(tx, record, comment=edit.comment)
            return present(record)
        updated = edited(tx, record, edit, ignore_conflicts=ignore_conflicts)
        return present(updated, conflicts=current_conflicts(tx, updated))


def edited(
    tx: Transaction, record: ScheduledChangeRecord, edit: ScheduleEdit, *, ignore_conflicts: bool
) -> ScheduledChangeRecord:
    doc = dict(record.doc)
    if edit.instructions is not None:
        path = edit.instructions_path
        target = get_flag_in(tx.uow, record.project, record.flag, record.environment)
        check_instructions_now(
            tx,
            target,
            edit.instructions,
            record.environment,
            path=path,
            comment=edit.comment or record.doc.get("comment"),
        )
        conflicts = conflicts_with(
            edit.instructions,
            record.environment,
            others_of(tx.uow, record.project, record.flag, excluding=record.id),
        )
        if not ignore_conflicts:
            refuse_conflicts(conflicts, edit.instructions, path=path)
        doc["instructions"] = edit.instructions
    if edit.comment is not None:
        doc["comment"] = edit.comment
    execution = (
        record.execution if edit.execution_ms is None else from_epoch_millis(edit.execution_ms)
    )
    updated = replace(record, execution=execution, version=record.version + 1, doc=doc)
    tx.uow.scheduled_changes.replace(updated, expected_version=record.version)
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(record.project, record.flag, record.environment),
        action="updateScheduledChange",
        comment=edit.comment,
        before=present(record),
        after=present(updated),
    )
    return updated


def raise_not_pending(record: ScheduledChangeRecord) -> None:
    raise Conflict(
        f"scheduled change {record.id!r} has {record.status} and can no longer be changed"
    )


def remove(tx: Transaction, record: ScheduledChangeRecord, *, comment: str | None) -> None:
    tx.uow.scheduled_changes.delete(record.id)
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(record.project, record.flag, record.environment),
        action="deleteScheduledChange",
        comment=comment,
        before=present(record),
    )


def delete_scheduled_change(
    plane: ControlPlane, actor: Actor, project: str, flag: str, environment: str, change_id: str
) -> None:
    """Delete a pending change; one that ran (or failed) stays as the record of what happened."""
    authorize(actor, "writer", project=project, environment=environment)
    with plane.write(actor) as tx:
        record = existing(tx.uow, project, flag, environment, change_id)
        if record.status != "pending":
            raise_not_pending(record)
        remove(tx, record, comment=None)
