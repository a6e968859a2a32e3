"""Team endpoints in LaunchDarkly's REST v2 shapes: `/api/v2/teams[/{teamKey}]`, edited by
semantic patch. Handlers parse, call one use case in `services.teams`, and answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Admin, Plane, Reader
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import teams
from flagstaff_server.services.paging import Page

router = PrefixedRouter(prefix="/teams", tags=["Teams"])

BODY = {
    "requestBody": {
        "required": True,
        "description": "`teamPostInput`: {key, name, description, memberIDs, customRoleKeys, "
        "permissionGrants: [{actionSet: maintainTeam, memberIDs}]}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH = {
    "requestBody": {
        "required": True,
        "description": "A semantic patch {instructions, comment}: addMembers, removeMembers, "
        "replaceMembers, addCustomRoles, removeCustomRoles {values}; updateName, "
        "updateDescription {value}; addPermissionGrants, removePermissionGrants "
        "{actionSet: maintainTeam, memberIDs}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


@router.get("", summary="List teams (by key; limit 1 to 1000, default 20, and offset)")
async def list_teams(
    plane: Plane,
    actor: Reader,
    limit: Annotated[int, Query()] = 20,
    offset: Annotated[int, Query()] = 0,
) -> Response:
    page = Page(limit=limit, offset=offset)
    return json_response(await run_in_threadpool(teams.list_teams, plane, actor, page))


@router.post("", status_code=201, summary="Create a team", openapi_extra=BODY)
async def create_team(request: Request, plane: Plane, actor: Admin) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(teams.create_team, plane, actor, body)
    return json_response(created, status=201)


@router.get("/{teamKey}", summary="Get a team")
async def get_team(
    teamKey: str,  # noqa: N803 - LaunchDarkly's parameter name
    plane: Plane,
    actor: Reader,
) -> Response:
    return json_response(await run_in_threadpool(teams.get_team, plane, actor, teamKey))


@router.patch("/{teamKey}", summary="Edit a team (semantic patch)", openapi_extra=PATCH)
async def patch_team(
    teamKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Admin,
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(teams.patch_team, plane, actor, teamKey, body)
    return json_response(updated)


@router.delete("/{teamKey}", status_code=204, summary="Delete a team")
async def delete_team(
    teamKey: str,  # noqa: N803
    plane: Plane,
    actor: Admin,
) -> Response:
    await run_in_threadpool(teams.delete_team, plane, actor, teamKey)
    return Response(status_code=204)
