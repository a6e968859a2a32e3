"""Applying due scheduled changes, exactly once, for the worker role.

One change is applied in one transaction: claim its row (pending, held until commit; PostgreSQL
skips a row another worker holds), check the worker still holds its lease, mark it executed,
apply its instructions through `flags.edit_flag` (the path of a semantic PATCH: validation,
audit entry, outbox) and record the execution's audit entry under an id derived from the change's
id. That id is the unique key: a second transaction applying the same change, however it got
there, fails on it and rolls back everything it wrote. A killed worker commits nothing.

Instructions that no longer fit the flag (a rule removed since, the flag deleted) fail the
change instead: its status becomes "failed" with the error, in an audit entry of its own, and the
flag is left alone. A change applied after its time (the workers were down) runs late, and both
audit entries say so and by how much (docs/workflows.md, "Scheduled changes").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Literal

from flagstaff_server.errors import (
    FlagstaffError,
    Forbidden,
    LostRace,
    StoreUnavailable,
    VersionConflict,
)
from flagstaff_server.services.access import Actor
from flagstaff_server.services.approval_gate import PRECLEARED
from flagstaff_server.services.flags import edit_flag
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis
from flagstaff_server.services.ports import ScheduledChangeRecord, UnitOfWork
from flagstaff_server.services.race import retry_lost_races
from flagstaff_server.services.scheduled_change_checks import semantic_request
from flagstaff_server.services.scheduled_change_records import (
    AUDIT_KIND,
    present,
    resource_of,
    stored_actor,
)

Outcome = Literal["executed", "failed"]
LeaseCheck = Callable[[UnitOfWork, datetime], bool]
"""Whether the caller still holds the lease it works under, asked inside each transaction."""

LATE_AFTER_MILLIS = 60_000
"""A change applied more than this after its `executionDate` is called late in its audit
entries' comments (every entry records `lateByMillis` whatever it is)."""


class NotLeader(Exception):
    """The worker lost its lease while working: the transaction rolls back, the run stops."""


def execution_entry_id(change_id: str) -> str:
    """The id of the audit entry that records a change's execution (or failure): the same for
    every attempt, so a second one cannot commit."""
    return hashlib.sha256(f"scheduled-change:{change_id}".encode()).hexdigest()[:24]


def due(plane: ControlPlane, now: datetime, limit: int) -> list[str]:
    """Ids of the changes due at `now`, oldest first."""
    with plane.read() as uow:
        return [record.id for record in uow.scheduled_changes.due(now, limit)]


def backlog(plane: ControlPlane, now: datetime) -> tuple[int, datetime | None]:
    with plane.read() as uow:
        return uow.scheduled_changes.backlog(now)


def describe_lateness(millis: int) -> str:
    if millis <= LATE_AFTER_MILLIS:
        return "on time"
    seconds = millis // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{hours}h"] if hours else []
    if hours or minutes:
        parts.append(f"{minutes}m")
    parts.append(f"{seconds}s")
    return f"late by {' '.join(parts)} ({millis} ms after its executionDate)"


def comment_for(record: ScheduledChangeRecord, late_ms: int, *, failed: str | None = None) -> str:
    what = f"Scheduled change {record.id}"
    outcome = f"failed: {failed}" if failed is not None else describe_lateness(late_ms)
    comment = record.doc.get("comment")
    return f"{what}, {outcome}" + (f". {comment}" if comment else "")


def acting_actor(uow: UnitOfWork, record: ScheduledChangeRecord) -> Actor:
    """The author, with the access their token has now: a token revoked since cannot change the
    flag through its schedule. Credentials without a token row (the configured admin token)
    keep what was stored."""
    stored = stored_actor(record)
    token = uow.tokens.get(stored.token_id)
    if token is None:
        return stored
    if token.revoked is not None:
        raise Forbidden(f"the access token {token.name!r} that scheduled this change is revoked")
    return Actor(
        token_id=token.id,
        name=token.name,
        role=token.role,
        project=token.project,
        environment=token.environment,
    )


def execute(plane: ControlPlane, change_id: str, *, holds_lease: LeaseCheck) -> Outcome | None:
    """Apply the change if it is pending and due; None when there was nothing to do (another
    worker applied it, it was edited to a later time or deleted). Raises `NotLeader` and
    `StoreUnavailable`; every other error fails the change."""
    try:
        return retry_lost_races(lambda: apply_once(plane, change_id, holds_lease))
    except (NotLeader, StoreUnavailable, LostRace):
        raise
    except FlagstaffError as exc:
        return record_failure(plane, change_id, exc, holds_lease)


def claimed(
    tx: Transaction, change_id: str, holds_lease: LeaseCheck
) -> ScheduledChangeRecord | None:
    record = tx.uow.scheduled_changes.claim(change_id)
    if record is None or record.execution > tx.now:
        return None
    if not holds_lease(tx.uow, tx.now):
        raise NotLeader(f"lost the lease before applying scheduled change {change_id}")
    return record


def mark(tx: Transaction, record: ScheduledChangeRecord, expected_version: int) -> None:
    """Store the change's new status; an edit committed in between is a race to run again."""
    try:
        tx.uow.scheduled_changes.replace(record, expected_version=expected_version)
    except VersionConflict as exc:
        raise LostRace(f"scheduled change {record.id!r} changed while it was applied") from exc


def apply_once(plane: ControlPlane, change_id: str, holds_lease: LeaseCheck) -> Outcome | None:
    with plane.read() as uow:
        found = uow.scheduled_changes.get(change_id)
    if found is None or found.status != "pending":
        return None
    with plane.write(stored_actor(found)) as tx:
        record = claimed(tx, change_id, holds_lease)
        if record is None:
            return None
        tx.actor = acting_actor(tx.uow, record)
        late_ms = max(epoch_millis(tx.now) - epoch_millis(record.execution), 0)
        done = replace(
            record,
            status="executed",
            version=record.version + 1,
            doc={**record.doc, "executedDate": epoch_millis(tx.now), "lateByMillis": late_ms},
        )
        # the change's own row first: a worker killed from here on has written it, uncommitted
        mark(tx, done, record.version)
        comment = comment_for(record, late_ms)
        request = semantic_request(
            record,
            instructions=record.doc["instructions"],
            environment=record.environment,
            comment=comment,
        )
        # cleared when it was scheduled (approved, or by someone who may change it directly)
        edit_flag(tx, record.project, record.flag, request, clearance=PRECLEARED)
        tx.audit(
            kind=AUDIT_KIND,
            resource=resource_of(record.project, record.flag, record.environment),
            action="executeScheduledChange",
            comment=comment,
            after=present(done),
            entry_id=execution_entry_id(record.id),
        )
    return "executed"


def record_failure(
    plane: ControlPlane, change_id: str, error: FlagstaffError, holds_lease: LeaseCheck
) -> Outcome | None:
    with plane.read() as uow:
        found = uow.scheduled_changes.get(change_id)
    if found is None or found.status != "pending":
        return None
    with plane.write(stored_actor(found)) as tx:
        record = claimed(tx, change_id, holds_lease)
        if record is None:
            return None
        late_ms = max(epoch_millis(tx.now) - epoch_millis(record.execution), 0)
        failure = {"message": error.message, "code": error.code}
        if error.path is not None:
            failure["path"] = error.path
        failed = replace(
            record,
            status="failed",
            version=record.version + 1,
            doc={
                **record.doc,
                "executedDate": epoch_millis(tx.now),
                "lateByMillis": late_ms,
                "error": failure,
            },
        )
        mark(tx, failed, record.version)
        tx.audit(
            kind=AUDIT_KIND,
            resource=resource_of(record.project, record.flag, record.environment),
            action="failScheduledChange",
            comment=comment_for(record, late_ms, failed=error.message),
            after=present(failed),
            entry_id=execution_entry_id(record.id),
        )
    return "failed"
