"""Approval-request endpoints in LaunchDarkly's REST v2 shapes: per flag
`/api/v2/projects/{projectKey}/flags/{featureFlagKey}/environments/{environmentKey}/approval-requests[/{id}[/reviews|/apply]]`
and generic `/api/v2/approval-requests[/{id}[/reviews|/apply]]` (flags and segments by
`resourceId`). Handlers parse, call one use case, and answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader, Writer, require
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import approval_listing, approval_requests, approval_reviews
from flagstaff_server.services.access import Actor
from flagstaff_server.services.approval_requests import flag_resource

flag_router = PrefixedRouter(prefix="/projects", tags=["Approvals"])
generic_router = PrefixedRouter(prefix="/approval-requests", tags=["Approvals"])

Caller = Annotated[Actor, Depends(require("reader", project=None, env=None))]
"""Any valid token: the generic routes learn the project from the request, and the use case
checks the caller's role on it."""

FLAG_PATH = "/{projectKey}/flags/{featureFlagKey}/environments/{environmentKey}/approval-requests"


def body_doc(description: str) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    }


CREATE = body_doc(
    "`{description, instructions (1-100 semantic-patch instructions), comment?, "
    "executionDate? (Unix ms: applying makes a scheduled change), notifyMemberIds?}`; the "
    "generic route also takes `resourceId` (`proj/P:env/E:flag/K` or `...:segment/K`)"
)
REVIEW = body_doc("`{kind: approve|decline|comment, comment?}`")
APPLY = body_doc("`{comment?}`")
EDIT = body_doc(
    "Flagstaff's semantic patch `{comment?, instructions}` with "
    "`replaceApprovalRequestInstructions` "
    "{value: [instructions]}, `updateApprovalRequestDescription` {value}, "
    "`updateApprovalRequestExecutionDate` {value: Unix ms or null}; new instructions or a new "
    "date void the approvals given"
)


async def call(function: Callable[[], Any]) -> Any:
    return await run_in_threadpool(function)


# per flag -------------------------------------------------------------------------------------


@flag_router.get(FLAG_PATH, summary="List a flag's approval requests in an environment")
async def list_flag_requests(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
) -> Response:
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    return json_response(await call(lambda: approval_listing.list_for_flag(plane, actor, where)))


@flag_router.post(
    FLAG_PATH, status_code=201, summary="Ask for approval of a flag change", openapi_extra=CREATE
)
async def create_flag_request(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    created = await call(lambda: approval_requests.create(plane, actor, where, body))
    return json_response(created, status=201)


@flag_router.get(FLAG_PATH + "/{id}", summary="Get an approval request of a flag")
async def get_flag_request(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    plane: Plane,
    actor: Reader,
) -> Response:
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    return json_response(await call(lambda: approval_requests.get(plane, actor, id, where=where)))


@flag_router.patch(
    FLAG_PATH + "/{id}", summary="Edit a pending approval request", openapi_extra=EDIT
)
async def edit_flag_request(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    return json_response(
        await call(lambda: approval_requests.edit(plane, actor, id, body, where=where))
    )


@flag_router.delete(FLAG_PATH + "/{id}", status_code=204, summary="Delete a pending request")
async def delete_flag_request(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    plane: Plane,
    actor: Writer,
) -> Response:
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    await call(lambda: approval_requests.delete(plane, actor, id, where=where))
    return Response(status_code=204)


@flag_router.post(
    FLAG_PATH + "/{id}/reviews", summary="Review an approval request", openapi_extra=REVIEW
)
async def review_flag_request(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    reviewed = await call(lambda: approval_reviews.review(plane, actor, id, body, where=where))
    return json_response(reviewed)


@flag_router.post(
    FLAG_PATH + "/{id}/apply", summary="Apply an approved request", openapi_extra=APPLY
)
async def apply_flag_request(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await optional_json(request)
    where = flag_resource(projectKey, featureFlagKey, environmentKey)
    return json_response(
        await call(lambda: approval_reviews.apply(plane, actor, id, body, where=where))
    )


async def optional_json(request: Request) -> object:
    """A body that may be left out (`apply` with no comment)."""
    if not await request.body():
        return None
    return await read_json(request)


# generic --------------------------------------------------------------------------------------


@generic_router.get("", summary="List approval requests")
async def list_requests(
    plane: Plane,
    actor: Caller,
    filter: Annotated[
        str | None,
        Query(description='`field equals value` or `field anyOf ["a","b"]`, comma-separated'),
    ] = None,
    limit: int = 20,
    offset: int = 0,
) -> Response:
    listed = await call(
        lambda: approval_listing.list_all(
            plane, actor, filter_text=filter, limit=limit, offset=offset
        )
    )
    return json_response(listed)


@generic_router.post(
    "", status_code=201, summary="Ask for approval of a change", openapi_extra=CREATE
)
async def create_request(request: Request, plane: Plane, actor: Caller) -> Response:
    body = await read_json(request)
    created = await call(lambda: approval_requests.create(plane, actor, None, body))
    return json_response(created, status=201)


@generic_router.get("/{id}", summary="Get an approval request")
async def get_request(id: str, plane: Plane, actor: Caller) -> Response:
    return json_response(await call(lambda: approval_requests.get(plane, actor, id, where=None)))


@generic_router.patch("/{id}", summary="Edit a pending approval request", openapi_extra=EDIT)
async def edit_request(id: str, request: Request, plane: Plane, actor: Caller) -> Response:
    body = await read_json(request)
    return json_response(
        await call(lambda: approval_requests.edit(plane, actor, id, body, where=None))
    )


@generic_router.delete("/{id}", status_code=204, summary="Delete a pending approval request")
async def delete_request(id: str, plane: Plane, actor: Caller) -> Response:
    await call(lambda: approval_requests.delete(plane, actor, id, where=None))
    return Response(status_code=204)


@generic_router.post("/{id}/reviews", summary="Review an approval request", openapi_extra=REVIEW)
async def review_request(id: str, request: Request, plane: Plane, actor: Caller) -> Response:
    body = await read_json(request)
    reviewed = await call(lambda: approval_reviews.review(plane, actor, id, body, where=None))
    return json_response(reviewed)


@generic_router.post("/{id}/apply", summary="Apply an approved request", openapi_extra=APPLY)
async def apply_request(id: str, request: Request, plane: Plane, actor: Caller) -> Response:
    body = await optional_json(request)
    return json_response(
        await call(lambda: approval_reviews.apply(plane, actor, id, body, where=None))
    )
