"""Progressive and guarded rollouts started, stopped, paused and resumed through the flag's
semantic patch (`startAutomatedRelease` and its family, docs/rollouts.md), and read back. Each
flag change goes through `flags.commit_edit` (validation, approval and comment rules, the
`updateFlag` audit entry, change records) in the same transaction as the release record and
its own audit entry. The worker's steps are `services.automated_release_runs`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.domain.automated_release import (
    ACTIVE,
    PAUSE,
    RESUME,
    START,
    STOP,
    finished_flag,
    is_release_instruction,
    parse_start,
    started_flag,
    summary,
)
from flagstaff_server.domain.document import clone
from flagstaff_server.domain.experiment_rollout import variation_index
from flagstaff_server.domain.instruction import Instruction, check_instructions
from flagstaff_server.errors import Conflict, NotFound, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.approval_gate import DIRECT, Clearance
from flagstaff_server.services.edit import EditRequest, SemanticPatch
from flagstaff_server.services.experiment_ports import PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.flags import commit_edit, get_flag_in, get_record
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork
from flagstaff_server.services.race import retry_lost_races

AUDIT_KIND = "automatedRelease"
INTERNAL = ("seed",)


def resource_of(project: str, environment: str, flag: str) -> str:
    return f"proj/{project}:env/{environment}:flag/{flag}"


def is_release_patch(request: EditRequest) -> bool:
    """Whether a PATCH of a flag is one of the release instructions (all of them must be)."""
    edit = request.edit
    if not isinstance(edit, SemanticPatch):
        return False
    flags = [is_release_instruction(item) for item in edit.instructions]
    if any(flags) and not all(flags):
        raise ValidationError(
            "automated release instructions cannot be mixed with other instructions",
            path="/instructions",
        )
    return bool(flags) and all(flags)


def present(record: KeyedRecord) -> JsonObject:
    shown: JsonObject = {k: clone(v) for k, v in record.doc.items() if k not in INTERNAL}
    shown["_version"] = record.version
    shown["creationDate"] = epoch_millis(record.created)
    return shown


def event(tx: Transaction, doc: JsonObject, kind: str, description: str, **more: Any) -> None:
    doc["events"].append(
        {
            "kind": kind,
            "stageIndex": doc["stageIndex"],
            "description": description,
            "createdAt": epoch_millis(tx.now),
            **more,
        }
    )


def active_on(
    uow: UnitOfWork, project: str, environment: str, flag: str, rule_id: str | None
) -> list[KeyedRecord]:
    """The releases still owning a rule of the flag (one rule, or any when `rule_id` is None)."""
    return [
        record
        for record in uow.releases.list(project, environment)
        if record.doc["flagKey"] == flag
        and record.doc["status"] in ACTIVE
        and (rule_id is None or record.doc["ruleId"] == rule_id)
    ]


def audit(
    tx: Transaction, record: KeyedRecord, action: str, comment: str | None, **kw: Any
) -> None:
    doc = record.doc
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(record.project, record.environment, doc["flagKey"]),
        action=action,
        comment=comment,
        after=present(record),
        **kw,
    )


def store(tx: Transaction, record: KeyedRecord, doc: JsonObject) -> KeyedRecord:
    updated = replace(record, version=record.version + 1, doc=doc)
    tx.uow.releases.replace(updated, expected_version=record.version)
    return updated


def patch_release(
    plane: ControlPlane, actor: Actor, project: str, flag_key: str, request: EditRequest
) -> JsonObject:
    """Apply release instructions to the flag, all or nothing; returns the flag as stored."""
    edit = request.edit
    assert isinstance(edit, SemanticPatch)
    environment = edit.environment_key
    if environment is None:
        raise ValidationError(
            "automated release instructions need 'environmentKey'", path="/environmentKey"
        )
    authorize(actor, "writer", project=project, environment=environment)

    def attempt() -> JsonObject:
        with plane.write(actor) as tx:
            get_flag_in(tx.uow, project, flag_key, environment)
            for index, params in enumerate(check_instructions(edit.instructions)):
                apply(
                    tx,
                    project,
                    flag_key,
                    environment,
                    Instruction(index=index, params=params),
                    request,
                )
            from flagstaff_server.domain.flag import present_flag

            flag = get_record(tx.uow, project, flag_key)
            return present_flag(flag.doc, project_key=project)

    return retry_lost_races(attempt)


def apply(
    tx: Transaction,
    project: str,
    flag_key: str,
    environment: str,
    instruction: Instruction,
    request: EditRequest,
) -> None:
    if instruction.kind == START:
        start(tx, project, flag_key, environment, instruction, request)
        return
    rule_id = instruction.optional_string("ruleId")
    found = active_on(tx.uow, project, environment, flag_key, rule_id)
    if not found:
        raise NotFound(
            "no automated release is running on this flag"
            + (f"'s rule {rule_id!r}" if rule_id else "")
        )
    if len(found) > 1:
        raise instruction.error("several rules have releases: name one by 'ruleId'", "ruleId")
    [record] = found
    if instruction.kind == STOP:
        stop(tx, record, instruction, request.comment)
    elif instruction.kind == PAUSE:
        pause(tx, record, request.comment)
    elif instruction.kind == RESUME:
        resume(tx, record, request.comment)


def custom_metrics(uow: UnitOfWork, project: str) -> set[str]:
    return {r.key for r in uow.metrics.list(project, PROJECT_WIDE) if r.doc.get("kind") == "custom"}


def start(
    tx: Transaction,
    project: str,
    flag_key: str,
    environment: str,
    instruction: Instruction,
    request: EditRequest,
) -> None:
    flag = get_record(tx.uow, project, flag_key, for_update=True)
    release = parse_start(
        flag.doc,
        environment,
        instruction,
        release_id=new_id(),
        custom_metrics=custom_metrics(tx.uow, project),
    )
    if active_on(tx.uow, project, environment, flag_key, release["ruleId"]):
        raise Conflict("an automated release already runs on this rule")
    now = epoch_millis(tx.now)
    release.update(status="in_progress", stageStartedAt=now)
    release["stageDueAt"] = now + release["stages"][0]["durationMillis"]
    edited, before = started_flag(flag.doc, environment, release)
    release["servedBefore"] = before
    document = commit_edit(
        tx,
        flag,
        edited,
        action="updateFlag",
        comment=request.comment or f"{release['releaseKind'].capitalize()} rollout started",
        body=request.body,
    )
    release["stageFirstVersion"] = int(document["environments"][environment]["version"])
    event(tx, release, "stage_started", f"stage 1 of {len(release['stages'])} started")
    record = KeyedRecord(
        id=release["_id"],
        project=project,
        environment=environment,
        key=release["_id"],
        created=tx.now,
        doc=release,
    )
    tx.uow.releases.add(record)
    audit(tx, record, "startAutomatedRelease", request.comment)


def edit_flag_summary(
    tx: Transaction,
    record: KeyedRecord,
    doc: JsonObject,
    what: dict[str, Any] | None,
    comment: str,
    *,
    clearance: Clearance = DIRECT,
) -> None:
    """Store the flag with the release's state in `_automatedRelease`, serving `what` on the
    rule when given (left alone when the rule no longer carries the release)."""
    flag = get_record(tx.uow, record.project, doc["flagKey"], for_update=True)
    if what is not None:
        edited = finished_flag(flag.doc, doc, what)
    else:
        edited = clone(flag.doc)
        config = edited.get("environments", {}).get(record.environment)
        if config is not None:
            config["_automatedRelease"] = summary(doc)
    if edited is None:
        edited = clone(flag.doc)
        edited["environments"][record.environment]["_automatedRelease"] = summary(doc)
    commit_edit(
        tx,
        flag,
        edited,
        action="updateFlag",
        comment=comment,
        body={"release": doc["_id"]},
        clearance=clearance,
    )


def stop(
    tx: Transaction, record: KeyedRecord, instruction: Instruction, comment: str | None
) -> None:
    doc = clone(record.doc)
    flag = get_record(tx.uow, record.project, doc["flagKey"])
    final = instruction.string("finalVariationId")
    index = variation_index(flag.doc, final, instruction.path("finalVariationId"))
    doc["status"] = (
        "manually_completed" if final == doc["targetVariationId"] else "manually_reverted"
    )
    event(tx, doc, doc["status"], f"stopped by {tx.actor.name}, serving variation {index}")
    edit_flag_summary(tx, record, doc, {"variation": index}, comment or "Automated release stopped")
    audit(tx, store(tx, record, doc), "stopAutomatedRelease", comment)


def pause(tx: Transaction, record: KeyedRecord, comment: str | None) -> None:
    doc = clone(record.doc)
    if doc["status"] != "in_progress":
        raise Conflict(f"the release is {doc['status']}, not in progress")
    doc["status"] = "paused"
    doc["pausedRemainingMillis"] = max(int(doc["stageDueAt"]) - epoch_millis(tx.now), 0)
    event(tx, doc, "paused", f"paused by {tx.actor.name}")
    edit_flag_summary(tx, record, doc, None, comment or "Automated release paused")
    audit(tx, store(tx, record, doc), "pauseAutomatedRelease", comment)


def resume(tx: Transaction, record: KeyedRecord, comment: str | None) -> None:
    """A paused release goes on with what was left of its stage; one held for a regression
    (without auto-rollback) goes on as if the regression were dismissed."""
    doc = clone(record.doc)
    if doc["status"] not in ("paused", "monitoring_regressed"):
        raise Conflict(f"the release is {doc['status']}, not paused")
    now = epoch_millis(tx.now)
    doc["stageDueAt"] = now + int(doc.pop("pausedRemainingMillis", 0))
    for metric in doc["metrics"]:
        if metric.get("regressed"):
            metric["dismissed"] = True  # its regression no longer holds the release
    doc["status"] = "in_progress"
    doc["notice"] = None
    event(tx, doc, "resumed", f"resumed by {tx.actor.name}")
    edit_flag_summary(tx, record, doc, None, comment or "Automated release resumed")
    audit(tx, store(tx, record, doc), "resumeAutomatedRelease", comment)


def list_releases(plane: ControlPlane, project: str, flag_key: str, environment: str) -> JsonObject:
    """The flag's releases in the environment, newest first."""
    with plane.read() as uow:
        get_flag_in(uow, project, flag_key, environment)
        records = [
            r for r in uow.releases.list(project, environment) if r.doc["flagKey"] == flag_key
        ]
    items = [present(r) for r in reversed(records)]
    return {"items": items, "totalCount": len(items)}
