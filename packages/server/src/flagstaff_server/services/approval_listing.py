"""Listing approval requests: a flag's in one environment, and the account's
(`/api/v2/approval-requests`) with LaunchDarkly's `filter`, `limit` and `offset`. Read-only."""

from __future__ import annotations

from flagstaff_server.domain.approval_request import ResourceId, parse_filter, passes
from flagstaff_server.errors import ValidationError
from flagstaff_server.services.access import Actor
from flagstaff_server.services.approval_requests import (
    GENERIC_PATH,
    present,
    resource_doc,
)
from flagstaff_server.services.plane import ControlPlane, Transaction
from flagstaff_server.services.ports import JsonObject

MAX_LIMIT = 200


def list_for_flag(plane: ControlPlane, actor: Actor, where: ResourceId) -> JsonObject:
    """LaunchDarkly's `FlagConfigApprovalRequestsResponse`: the flag's requests in the
    environment, newest first."""
    with plane.read() as uow:
        resource_doc(uow, where.kind, where.project, where.environment, where.key)
        tx = Transaction(uow=uow, actor=actor, now=plane.clock())
        items = [
            present(tx, record)
            for record in uow.approval_requests.list(
                project=where.project, kind="flag", key=where.key, environment=where.environment
            )
        ]
    base = (
        f"/api/v2/projects/{where.project}/flags/{where.key}/environments/"
        f"{where.environment}/approval-requests"
    )
    return {
        "items": items,
        "totalCount": len(items),
        "_links": {"self": {"href": base, "type": "application/json"}},
    }


def list_all(
    plane: ControlPlane,
    actor: Actor,
    *,
    filter_text: str | None = None,
    limit: int = 20,
    offset: int = 0,
) -> JsonObject:
    """LaunchDarkly's `ExpandableApprovalRequestsResponse`: the requests the caller may read
    (its project's, for a scoped token) passing the filter, newest first, one page."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}", path="limit")
    if offset < 0:
        raise ValidationError("offset must not be negative", path="offset")
    filters = parse_filter(filter_text)
    with plane.read() as uow:
        tx = Transaction(uow=uow, actor=actor, now=plane.clock())
        shown = [
            body
            for record in uow.approval_requests.list(project=actor.project)
            if actor.may("reader", project=record.project, environment=record.environment)
            and passes(
                filters,
                facts(body := present(tx, record), project=record.project, kind=record.kind),
            )
        ]
    page = shown[offset : offset + limit]
    return {
        "items": page,
        "totalCount": len(shown),
        "_links": {"self": {"href": GENERIC_PATH, "type": "application/json"}},
    }


def facts(body: JsonObject, *, project: str, kind: str) -> dict[str, list[str]]:
    """What the filter fields see of a request."""
    return {
        "notifyMemberIds": list(body["notifyMemberIds"]),
        "requestorId": [body["requestorId"]],
        "resourceId": [body["resourceId"]],
        "resourceKind": [kind],
        "reviewStatus": [body["reviewStatus"]],
        "status": [body["status"]],
        "projectKey": [project],
    }
