"""Custom role endpoints in LaunchDarkly's REST v2 shapes: `/api/v2/roles[/{customRoleKey}]`.
Handlers parse, call one use case in `services.custom_roles`, and answer."""

from __future__ import annotations

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Admin, Plane
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import custom_roles

router = PrefixedRouter(prefix="/roles", tags=["Custom roles"])

BODY = {
    "requestBody": {
        "required": True,
        "description": "`CustomRolePost`: {key, name, description, policy: [statement], "
        "basePermissions (no_access|reader)}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH = {
    "requestBody": {
        "required": True,
        "description": "A JSON Patch of the role, as a bare array or {patch, comment} "
        "(`/policy/-` appends a statement), or {merge, comment}",
        "content": {"application/json": {"schema": {"type": "array"}}},
    }
}


@router.get("", summary="List custom roles")
async def list_roles(plane: Plane, actor: Admin) -> Response:
    return json_response(await run_in_threadpool(custom_roles.list_roles, plane, actor))


@router.post("", status_code=201, summary="Create a custom role", openapi_extra=BODY)
async def create_role(request: Request, plane: Plane, actor: Admin) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(custom_roles.create_role, plane, actor, body)
    return json_response(created, status=201)


@router.get("/{customRoleKey}", summary="Get a custom role (by key or _id)")
async def get_role(
    customRoleKey: str,  # noqa: N803 - LaunchDarkly's parameter name
    plane: Plane,
    actor: Admin,
) -> Response:
    return json_response(
        await run_in_threadpool(custom_roles.get_role, plane, actor, customRoleKey)
    )


@router.patch("/{customRoleKey}", summary="Edit a custom role (JSON Patch)", openapi_extra=PATCH)
async def patch_role(
    customRoleKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Admin,
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(custom_roles.patch_role, plane, actor, customRoleKey, body)
    return json_response(updated)


@router.delete("/{customRoleKey}", status_code=204, summary="Delete a custom role")
async def delete_role(
    customRoleKey: str,  # noqa: N803
    plane: Plane,
    actor: Admin,
) -> Response:
    await run_in_threadpool(custom_roles.delete_role, plane, actor, customRoleKey)
    return Response(status_code=204)
