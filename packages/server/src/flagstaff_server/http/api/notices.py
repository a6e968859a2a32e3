"""Routes for `/api/v2/status/notices`: post, list, get and delete the operator notices that
delivery nodes show on their status page."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Response, status

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import notices
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/status/notices", tags=["status notices"])

NoticeId = Annotated[str, Path(alias="noticeId", description="The notice's `_id`")]


@router.get("", response_model=schema.Notices, summary="List operator notices (expired too)")
def list_notices(plane: Plane, actor: Reader) -> JsonObject:
    items = notices.list_notices(plane, actor)
    return {
        "_links": {"self": {"href": notices.LINK_BASE, "type": "application/json"}},
        "items": items,
        "totalCount": len(items),
    }


@router.post(
    "",
    response_model=schema.Notice,
    status_code=status.HTTP_201_CREATED,
    summary="Post an operator notice; every delivery node's status page shows it",
)
def create_notice(plane: Plane, actor: Writer, body: schema.NoticePost) -> JsonObject:
    request = notices.NoticeRequest(
        title=body.title,
        message=body.message or "",
        severity=body.severity or "info",
        regions=tuple(body.regions or ()),
        expires_at=body.expires_at,
    )
    return notices.create_notice(plane, actor, request)


@router.get("/{noticeId}", response_model=schema.Notice, summary="Get an operator notice")
def get_notice(plane: Plane, actor: Reader, notice_id: NoticeId) -> JsonObject:
    return notices.get_notice(plane, actor, notice_id)


@router.delete(
    "/{noticeId}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete an operator notice (status pages stop showing it)",
)
def delete_notice(plane: Plane, actor: Writer, notice_id: NoticeId) -> Response:
    notices.delete_notice(plane, actor, notice_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
