"""The checks of a scheduled change's instructions: as a semantic PATCH would check them now
(`flags.preview_edit`, approval and comment rules included), and its conflicts with the flag's
other pending changes and with the flag as it is now. Raises or reports; never writes."""

from __future__ import annotations

import re
from typing import Any

from flagstaff_server.domain.scheduled_change import OtherChange, conflicts_with
from flagstaff_server.errors import FlagstaffError, ValidationError
from flagstaff_server.services.approval_gate import DIRECT, PRECLEARED, Clearance
from flagstaff_server.services.edit import EditRequest, SemanticPatch
from flagstaff_server.services.flags import preview_edit
from flagstaff_server.services.plane import Transaction, epoch_millis
from flagstaff_server.services.ports import (
    FlagRecord,
    JsonObject,
    ScheduledChangeRecord,
    UnitOfWork,
)
from flagstaff_server.services.scheduled_change_records import stored_actor

_INSTRUCTION_PATH = re.compile(r"^/instructions/(\d+)")


def semantic_request(
    record: ScheduledChangeRecord | None,
    *,
    instructions: list[dict[str, Any]],
    environment: str,
    comment: str | None,
) -> EditRequest:
    """The semantic PATCH a scheduled change amounts to (what the audit log keeps as its body)."""
    body: JsonObject = {"environmentKey": environment, "instructions": instructions}
    if comment is not None:
        body["comment"] = comment
    if record is not None:
        body["scheduledChangeId"] = record.id
        body["executionDate"] = epoch_millis(record.execution)
    return EditRequest(
        edit=SemanticPatch(instructions=instructions, environment_key=environment),
        comment=comment,
        body=body,
    )


def check_instructions_now(
    tx: Transaction,
    flag: FlagRecord,
    instructions: list[dict[str, Any]],
    environment: str,
    *,
    path: str = "/instructions",
    comment: str | None = None,
    clearance: Clearance = DIRECT,
) -> None:
    """Raise what a semantic PATCH with these instructions would raise now, its path moved under
    `path` (`/instructions/1/value/0/...` for a PATCH's replacement instructions). `clearance`
    as for a PATCH: scheduling a change an environment must approve needs an approval request
    (or the right to bypass it), as changing it directly would."""
    request = semantic_request(
        None, instructions=instructions, environment=environment, comment=comment
    )
    try:
        preview_edit(tx, flag, request, clearance=clearance)
    except ValidationError as exc:
        if path != "/instructions" and exc.path and exc.path.startswith("/instructions"):
            moved = path + exc.path[len("/instructions") :]
            raise ValidationError(exc.message, path=moved) from None
        raise


def others_of(
    uow: UnitOfWork, project: str, flag: str, *, excluding: str | None = None
) -> list[OtherChange]:
    return [
        OtherChange(
            id=other.id,
            environment=other.environment,
            execution_ms=epoch_millis(other.execution),
            instructions=other.doc["instructions"],
        )
        for other in uow.scheduled_changes.list(project, flag, status="pending")
        if other.id != excluding
    ]


def refuse_conflicts(
    conflicts: list[JsonObject], instructions: list[dict[str, Any]], *, path: str
) -> None:
    """LaunchDarkly answers a conflicting schedule with 400 unless `ignoreConflicts=true`."""
    if not conflicts:
        return
    first = conflicts[0]
    index = next(i for i, item in enumerate(instructions) if item is first["instruction"])
    raise ValidationError(
        f"{first['reason']}; pass ignoreConflicts=true to schedule it anyway",
        path=f"{path}/{index}",
    )


def current_conflicts(tx: Transaction, record: ScheduledChangeRecord) -> list[JsonObject]:
    """Conflicts of a pending change as of now: with the other pending changes of the flag, and
    with the flag itself (instructions that would fail if applied now: a rule removed since, a
    variation gone, ...). Executed and failed changes have none."""
    if record.status != "pending":
        return []
    instructions = record.doc["instructions"]
    found = conflicts_with(
        instructions,
        record.environment,
        others_of(tx.uow, record.project, record.flag, excluding=record.id),
    )
    flag = tx.uow.flags.get(record.project, record.flag)
    if flag is None:
        return found
    checking = Transaction(uow=tx.uow, actor=stored_actor(record), now=tx.now)
    try:
        # the approval rules were met when it was scheduled; what is left is whether it fits
        check_instructions_now(
            checking, flag, instructions, record.environment, clearance=PRECLEARED
        )
    except FlagstaffError as exc:
        match = _INSTRUCTION_PATH.match(exc.path or "")
        index = int(match.group(1)) if match else 0
        found.append(
            {
                "instruction": instructions[min(index, len(instructions) - 1)],
                "reason": f"does not apply to the flag as it is now: {exc.message}",
                "path": exc.path,
            }
        )
    return found
