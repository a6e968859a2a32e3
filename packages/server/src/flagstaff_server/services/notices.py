"""Operator notices through the management API: post, list, read and delete. Each write is
audited and appends an outbox change of kind "notice" in the same transaction, so every delivery
node learns of it through the change feed and shows it on its status page with the control
plane gone (docs/operations/regions.md, "Status page").

Posting and deleting take an unscoped writer (a notice concerns the whole platform); any caller
may read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.notice import (
    ID_PATTERN,
    Notice,
    check_expiry,
    check_message,
    check_regions,
    check_severity,
    check_title,
    notice_json,
)
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.plane import (
    ControlPlane,
    Transaction,
    epoch_millis,
    from_epoch_millis,
    new_id,
)
from flagstaff_server.services.ports import AuditEntry, JsonObject, NoticeRecord, Store, UnitOfWork

LINK_BASE = "/api/v2/status/notices"
SIGNED_ACTOR_PREFIX = "break-glass:"
"""Audit entries of signed notices name their signing key as the actor (as overrides do)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NoticeRequest:
    title: str
    message: str = ""
    severity: str = "info"
    regions: tuple[str, ...] = ()
    expires_at: int | None = None


def resource_of(notice_id: str) -> str:
    return f"notice/{notice_id}"


def notice_of(record: NoticeRecord) -> Notice:
    doc = record.doc
    return Notice(
        id=record.id,
        title=str(doc["title"]),
        message=str(doc.get("message", "")),
        severity=check_severity(doc.get("severity", "info")),
        regions=tuple(doc.get("regions", ())),
        created_ms=epoch_millis(record.created),
        expires_ms=None if record.expires is None else epoch_millis(record.expires),
    )


def represent(record: NoticeRecord) -> JsonObject:
    href = f"{LINK_BASE}/{record.id}"
    return {
        "_links": {"self": {"href": href, "type": "application/json"}},
        **notice_json(notice_of(record)),
    }


def create_notice(plane: ControlPlane, actor: Actor, request: NoticeRequest) -> JsonObject:
    authorize(actor, "writer")
    with plane.write(actor) as tx:
        record = NoticeRecord(
            id=new_id(),
            created=tx.now,
            expires=_expiry(request.expires_at, tx),
            doc={
                "title": check_title(request.title),
                "message": check_message(request.message),
                "severity": check_severity(request.severity),
                "regions": list(check_regions(list(request.regions))),
            },
        )
        tx.uow.notices.add(record)
        after = represent(record)
        tx.audit(kind="notice", resource=resource_of(record.id), action="createNotice", after=after)
        tx.change(
            project="",
            environment="",
            kind="notice",
            key=record.id,
            version=1,
            item=notice_json(notice_of(record)),
        )
    return after


def _expiry(expires_at: int | None, tx: Transaction) -> datetime | None:
    expires = check_expiry(expires_at, now_ms=epoch_millis(tx.now))
    return None if expires is None else from_epoch_millis(expires)


def list_notices(plane: ControlPlane, actor: Actor) -> list[JsonObject]:
    authorize(actor, "reader")
    with plane.read() as uow:
        return [represent(record) for record in uow.notices.list()]


def get_notice(plane: ControlPlane, actor: Actor, notice_id: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        return represent(_existing(uow, notice_id))


def delete_notice(plane: ControlPlane, actor: Actor, notice_id: str) -> None:
    authorize(actor, "writer")
    with plane.write(actor) as tx:
        record = _existing(tx.uow, notice_id)
        tx.uow.notices.delete(record.id)
        tx.audit(
            kind="notice",
            resource=resource_of(record.id),
            action="deleteNotice",
            before=represent(record),
        )
        # version 2: the deletion follows the one version a notice has
        tx.change(project="", environment="", kind="notice", key=record.id, version=2, item=None)


def record_signed_notice(
    store: Store, document: Mapping[str, Any], *, accepted_at: int, accepted_by: str
) -> bool:
    """The audit entry of a signed notice (or clear) a node accepted while the API was out of
    reach; False when it was there already (its id is the document's, so every node that
    accepted it may record it). Raises StoreUnavailable (or the region's read-only error) while
    the database cannot take it. The notice itself stays on the nodes, not in the table."""
    clear = document.get("kind") == "statusNoticeClear"
    notice_id = str(document["notice"] if clear else document["id"])
    entry = AuditEntry(
        id=str(document["id"]),
        at=from_epoch_millis(accepted_at),
        actor=f"{SIGNED_ACTOR_PREFIX}{document['keyId']}",
        kind="notice",
        resource=resource_of(notice_id),
        action="breakGlassNoticeClear" if clear else "breakGlassNotice",
        comment=f"signed {'clear' if clear else 'notice'} {document['id']} accepted by "
        f"{accepted_by}",
        after={**document, "acceptedAt": accepted_at, "acceptedBy": accepted_by},
    )
    try:
        with store.unit_of_work() as uow:
            uow.audit.append(entry)
    except AlreadyExists:
        return False
    return True


def _existing(uow: UnitOfWork, notice_id: str) -> NoticeRecord:
    record = uow.notices.get(notice_id) if ID_PATTERN.fullmatch(notice_id) else None
    if record is None:
        raise NotFound(f"no notice {notice_id[:64]!r}")
    return record
