"""Scheduled-change endpoints in LaunchDarkly's REST v2 shapes:
`/api/v2/projects/{projectKey}/flags/{featureFlagKey}/environments/{environmentKey}/scheduled-changes[/{id}]`.
Handlers parse, call one use case in `services.scheduled_changes`, and answer."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import scheduled_changes

router = PrefixedRouter(prefix="/projects", tags=["Scheduled changes"])

PATH = "/{projectKey}/flags/{featureFlagKey}/environments/{environmentKey}/scheduled-changes"

IgnoreConflicts = Annotated[
    bool,
    Query(
        alias="ignoreConflicts",
        description="Succeed (true) or fail with 400 (false, the default) when the instructions "
        "conflict with the flag's other pending scheduled changes",
    ),
]

CREATE_BODY = {
    "requestBody": {
        "required": True,
        "description": "`{executionDate (Unix ms, not in the past), instructions (1-100 flag "
        "semantic-patch instructions), comment?}`",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH_BODY = {
    "requestBody": {
        "required": True,
        "description": "A semantic patch `{comment?, instructions}` with the instruction kinds "
        "`replaceScheduledChangesInstructions` {value: [instructions]}, "
        "`updateScheduledChangesExecutionDate` {value: Unix ms} and `deleteScheduledChange`",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


@router.get(PATH, summary="List a flag's scheduled changes in an environment")
async def list_scheduled_changes(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
    status: Annotated[
        Literal["pending", "executed", "failed", "all"],
        Query(description="Flagstaff: which changes (default pending, as LaunchDarkly lists)"),
    ] = "pending",
) -> Response:
    listed = await run_in_threadpool(
        scheduled_changes.list_scheduled_changes,
        plane,
        actor,
        projectKey,
        featureFlagKey,
        environmentKey,
        status=None if status == "all" else status,
    )
    return json_response(listed)


@router.post(
    PATH, status_code=201, summary="Schedule a change to a flag", openapi_extra=CREATE_BODY
)
async def create_scheduled_change(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
    ignore_conflicts: IgnoreConflicts = False,
) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(
        lambda: scheduled_changes.create_scheduled_change(
            plane,
            actor,
            projectKey,
            featureFlagKey,
            environmentKey,
            body,
            ignore_conflicts=ignore_conflicts,
        )
    )
    return json_response(created, status=201)


@router.get(PATH + "/{id}", summary="Get a scheduled change")
async def get_scheduled_change(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    plane: Plane,
    actor: Reader,
) -> Response:
    found = await run_in_threadpool(
        scheduled_changes.get_scheduled_change,
        plane,
        actor,
        projectKey,
        featureFlagKey,
        environmentKey,
        id,
    )
    return json_response(found)


@router.patch(
    PATH + "/{id}",
    summary="Edit a pending scheduled change (semantic patch)",
    openapi_extra=PATCH_BODY,
)
async def patch_scheduled_change(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    request: Request,
    plane: Plane,
    actor: Writer,
    ignore_conflicts: IgnoreConflicts = False,
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(
        lambda: scheduled_changes.update_scheduled_change(
            plane,
            actor,
            projectKey,
            featureFlagKey,
            environmentKey,
            id,
            body,
            ignore_conflicts=ignore_conflicts,
        )
    )
    return json_response(updated)


@router.delete(PATH + "/{id}", status_code=204, summary="Delete a pending scheduled change")
async def delete_scheduled_change(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    plane: Plane,
    actor: Writer,
) -> Response:
    await run_in_threadpool(
        scheduled_changes.delete_scheduled_change,
        plane,
        actor,
        projectKey,
        featureFlagKey,
        environmentKey,
        id,
    )
    return Response(status_code=204)
