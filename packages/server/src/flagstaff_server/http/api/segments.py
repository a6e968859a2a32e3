"""Segment endpoints of the management API (`/api/v2/segments/{projectKey}/{environmentKey}`)
in LaunchDarkly's REST v2 shapes. Handlers parse, call one use case in `services.segments`, answer.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.flags import JSON_BODY, PATCH_BODY
from flagstaff_server.http.api.payload import (
    expected_version,
    is_semantic_patch,
    json_response,
    read_json,
)
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import segments
from flagstaff_server.services.access import authorize_accesses
from flagstaff_server.services.edit import parse_edit
from flagstaff_server.services.edit_access import segment_edit_needs

router = PrefixedRouter(prefix="/segments", tags=["Segments"])


@router.get("/{projectKey}/{environmentKey}", summary="List segments")
async def list_segments(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    environmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
    limit: Annotated[int, Query(ge=1, le=1000)] = segments.DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    page = await run_in_threadpool(
        segments.list_segments, plane, projectKey, environmentKey, limit=limit, offset=offset
    )
    return json_response(page)


@router.post(
    "/{projectKey}/{environmentKey}",
    status_code=201,
    summary="Create a segment",
    openapi_extra=JSON_BODY,
)
async def create_segment(
    projectKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(
        segments.create_segment, plane, actor, projectKey, environmentKey, body
    )
    return json_response(created, status=201)


@router.get("/{projectKey}/{environmentKey}/{segmentKey}", summary="Get a segment")
async def get_segment(
    projectKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    segmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
) -> Response:
    segment = await run_in_threadpool(
        segments.get_segment, plane, projectKey, environmentKey, segmentKey
    )
    return json_response(segment)


@router.patch(
    "/{projectKey}/{environmentKey}/{segmentKey}",
    summary="Update a segment (JSON Patch or semantic patch)",
    openapi_extra=PATCH_BODY,
)
async def patch_segment(
    projectKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    segmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    edit = parse_edit(
        await read_json(request),
        semantic=is_semantic_patch(request),
        expected_version=expected_version(request),
    )
    authorize_accesses(
        actor,
        segment_edit_needs(
            edit.edit, project=projectKey, environment=environmentKey, key=segmentKey
        ),
    )
    patched = await run_in_threadpool(
        segments.patch_segment, plane, actor, projectKey, environmentKey, segmentKey, edit
    )
    return json_response(patched)


@router.delete(
    "/{projectKey}/{environmentKey}/{segmentKey}", status_code=204, summary="Delete a segment"
)
async def delete_segment(
    projectKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    segmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Writer,
) -> Response:
    await run_in_threadpool(
        segments.delete_segment, plane, actor, projectKey, environmentKey, segmentKey
    )
    return Response(status_code=204)
