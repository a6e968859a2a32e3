"""Routes for `/api/v2/auditlog`: who changed what, newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Plane, Reader
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import audit
from flagstaff_server.services.plane import MAX_EPOCH_MILLIS
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/auditlog", tags=["audit log"])

EntryId = Annotated[str, Path(alias="entryId", description="The entry's `_id`")]


@router.get("", response_model=schema.AuditLog, summary="List audit log entries")
def list_entries(
    plane: Plane,
    actor: Reader,
    spec: Annotated[
        str | None,
        Query(
            max_length=1024,
            description="Resource specifier: `proj/demo` (and everything in it) or a glob such "
            "as `proj/*:env/production:flag/*`",
        ),
    ] = None,
    before: Annotated[
        int | None,
        Query(ge=0, le=MAX_EPOCH_MILLIS, description="Only entries before this epoch ms"),
    ] = None,
    after: Annotated[
        int | None,
        Query(ge=0, le=MAX_EPOCH_MILLIS - 1, description="Only entries after this epoch ms"),
    ] = None,
    q: Annotated[
        str | None, Query(max_length=256, description="Text in the resource name, spec or comment")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=audit.MAX_LIMIT)] = audit.DEFAULT_LIMIT,
) -> JsonObject:
    query = audit.AuditQuery(spec=spec, before=before, after=after, q=q, limit=limit)
    items, total = audit.list_entries(plane, actor, query)
    return {
        "_links": {"self": {"href": "/api/v2/auditlog", "type": "application/json"}},
        "items": items,
        "totalCount": total,
    }


@router.get("/{entryId}", response_model=schema.AuditLogEntry, summary="Get an audit log entry")
def get_entry(plane: Plane, actor: Reader, entry_id: EntryId) -> JsonObject:
    return audit.get_entry(plane, actor, entry_id)
