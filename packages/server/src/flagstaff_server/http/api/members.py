"""Member endpoints in LaunchDarkly's REST v2 shapes: `/api/v2/members[/{id}]`, plus the member's
own `/api/v2/members/me/profile`, `/api/v2/members/me/password` and `/api/v2/members/me/tokens`,
and the public
`/api/v2/members/invitations` that turns an invitation into a password. Handlers parse, call one
use case in `services.members`, and answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Admin, Plane, Reader
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import members
from flagstaff_server.services.paging import Page

router = PrefixedRouter(prefix="/members", tags=["Members"])

MemberId = Annotated[str, Path(alias="id", description="The member's `_id`, or `me`")]
INVITE = {
    "requestBody": {
        "required": True,
        "description": "`[NewMemberForm]` (1 to 50): {email, role (reader|writer|admin|"
        "no_access) or customRoles, firstName, lastName, teamKeys}",
        "content": {"application/json": {"schema": {"type": "array"}}},
    }
}
PATCH = {
    "requestBody": {
        "required": True,
        "description": "A JSON Patch of `/role`, `/customRoles` (or `/customRoles/<i>`) and "
        "Flagstaff's `/deactivated`, as a bare array or {patch, comment}",
        "content": {"application/json": {"schema": {"type": "array"}}},
    }
}
PROFILE = {
    "requestBody": {
        "required": True,
        "description": "A JSON Patch of `/firstName` and `/lastName`, as a bare array or "
        "{patch, comment}",
        "content": {"application/json": {"schema": {"type": "array"}}},
    }
}


class PasswordChange(schema.Request):
    current_password: str
    password: str


class InvitationAccept(schema.Request):
    invitation: str
    password: str


@router.get("", summary="List members (filter=role:reader|writer,query:...,team:...)")
async def list_members(
    plane: Plane,
    actor: Reader,
    filter: Annotated[str | None, Query()] = None,
    limit: Annotated[int, Query()] = 20,
    offset: Annotated[int, Query()] = 0,
) -> Response:
    page = Page(limit=limit, offset=offset)
    return json_response(await run_in_threadpool(members.list_members, plane, actor, filter, page))


@router.post("", status_code=201, summary="Invite members", openapi_extra=INVITE)
async def invite_members(request: Request, plane: Plane, actor: Admin) -> Response:
    body = await read_json(request)
    invited = await run_in_threadpool(members.invite_members, plane, actor, body)
    return json_response(invited, status=201)


@router.post(
    "/invitations", status_code=200, summary="Accept an invitation: set the member's password"
)
async def accept_invitation(plane: Plane, body: InvitationAccept) -> Response:
    joined = await run_in_threadpool(
        members.accept_invitation, plane, body.invitation, body.password
    )
    return json_response(joined)


@router.patch("/me/profile", summary="Change your own first and last name", openapi_extra=PROFILE)
async def patch_own_profile(request: Request, plane: Plane, actor: Reader) -> Response:
    body = await read_json(request)
    return json_response(await run_in_threadpool(members.update_own_profile, plane, actor, body))


@router.post("/me/password", status_code=204, summary="Change your own password")
async def change_password(plane: Plane, actor: Reader, body: PasswordChange) -> Response:
    await run_in_threadpool(
        members.change_own_password, plane, actor, body.current_password, body.password
    )
    return Response(status_code=204)


@router.get("/me/tokens", summary="List your own access tokens")
async def own_tokens(plane: Plane, actor: Reader) -> Response:
    return json_response(await run_in_threadpool(members.own_tokens, plane, actor))


@router.get("/{id}", summary="Get a member")
async def get_member(plane: Plane, actor: Reader, member_id: MemberId) -> Response:
    return json_response(await run_in_threadpool(members.get_member, plane, actor, member_id))


@router.patch("/{id}", summary="Change a member's roles or deactivate them", openapi_extra=PATCH)
async def patch_member(
    request: Request, plane: Plane, actor: Admin, member_id: MemberId
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(members.patch_member, plane, actor, member_id, body)
    return json_response(updated)


@router.delete("/{id}", status_code=204, summary="Delete a member")
async def delete_member(plane: Plane, actor: Admin, member_id: MemberId) -> Response:
    await run_in_threadpool(members.delete_member, plane, actor, member_id)
    return Response(status_code=204)
