"""Recording break-glass documents (accepted by delivery nodes while the control plane was out
of reach) in the audit log: one entry per document, whose id is the document's id, so the
nodes that accepted it may each record it and the log holds it once.

The document arrives already verified by the node that accepted it; nothing here changes flags
(the override lives on the delivery plane until it expires or is cleared).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flagstaff_server.errors import AlreadyExists
from flagstaff_server.services import webhook_outbox
from flagstaff_server.services.plane import from_epoch_millis
from flagstaff_server.services.ports import AuditEntry, Store

ACTOR_PREFIX = "break-glass:"
"""Audit entries of break-glass documents name their signing key as the actor."""


def action_of(document: Mapping[str, Any]) -> str:
    """The audit action for a document: what it made the flag do."""
    if document.get("kind") == "flagOverrideClear":
        return "breakGlassClear"
    action = document.get("action")
    if isinstance(action, Mapping) and "variation" in action:
        return "breakGlassServeVariation"
    if isinstance(action, Mapping) and action.get("on") is True:
        return "breakGlassTurnOn"
    return "breakGlassTurnOff"


def describe(document: Mapping[str, Any], accepted_by: str) -> str:
    what = "clear" if document.get("kind") == "flagOverrideClear" else "override"
    text = f"break-glass {what} {document.get('id')} accepted by {accepted_by}"
    action = document.get("action")
    if isinstance(action, Mapping) and "variation" in action:
        text += f", serving variation {action['variation']} to everyone"
    expires = document.get("expiresAt")
    if what == "override":
        text += "; until cleared" if expires is None else f"; expires at {expires} (epoch ms)"
    return text


def record_document(
    store: Store, document: Mapping[str, Any], *, accepted_at: int, accepted_by: str
) -> bool:
    """Write the document's audit entry; False when it was there already. Raises
    StoreUnavailable (or the region's read-only error) while the database cannot take it."""
    resource = f"proj/{document['project']}:env/{document['environment']}:flag/{document['flag']}"
    entry = AuditEntry(
        id=str(document["id"]),
        at=from_epoch_millis(accepted_at),
        actor=f"{ACTOR_PREFIX}{document['keyId']}",
        kind="flag",
        resource=resource,
        action=action_of(document),
        comment=describe(document, accepted_by),
        after={**document, "acceptedAt": accepted_at, "acceptedBy": accepted_by},
    )
    try:
        with store.unit_of_work() as uow:
            uow.audit.append(entry)
            webhook_outbox.enqueue(uow, entry)
    except AlreadyExists:
        return False
    return True
