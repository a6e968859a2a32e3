"""Routes for `/api/v2/projects/{projectKey}/environments`: CRUD and SDK/mobile key resets."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Query, Response, status

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Admin, EnvironmentKey, Plane, ProjectKey, Reader
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import environments
from flagstaff_server.services.plane import MAX_EPOCH_MILLIS
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/projects/{projectKey}/environments", tags=["environments"])

Expiry = Annotated[
    int | None,
    Query(
        ge=0,
        le=MAX_EPOCH_MILLIS,
        description="When the old key stops working, in epoch milliseconds (default: now plus "
        "the server's key grace period)",
    ),
]
PatchBody = Annotated[
    Any,
    Body(
        description="A JSON Patch array, `{comment, patch}` or `{comment, merge}`",
        openapi_examples={
            "recolor": {"value": [{"op": "replace", "path": "/color", "value": "ff0000"}]}
        },
    ),
]


def environment_request(body: schema.EnvironmentPost) -> environments.EnvironmentRequest:
    defaults = environments.EnvironmentRequest(key=body.key, name=body.name)
    return environments.EnvironmentRequest(
        key=body.key,
        name=body.name,
        color=defaults.color if body.color is None else body.color,
        default_ttl=defaults.default_ttl if body.default_ttl is None else body.default_ttl,
        secure_mode=bool(body.secure_mode),
        default_track_events=bool(body.default_track_events),
        require_comments=bool(body.require_comments),
        confirm_changes=bool(body.confirm_changes),
        tags=tuple(body.tags or ()),
        critical=bool(body.critical),
    )


@router.get("", response_model=schema.Environments, summary="List a project's environments")
def list_environments(
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> JsonObject:
    items, total = environments.list_environments(plane, actor, project, limit=limit, offset=offset)
    return {
        "_links": {
            "self": {
                "href": f"/api/v2/projects/{project}/environments",
                "type": "application/json",
            }
        },
        "totalCount": total,
        "items": items,
    }


@router.post(
    "",
    response_model=schema.Environment,
    status_code=status.HTTP_201_CREATED,
    summary="Create an environment; every flag of the project gets a default configuration in it",
)
def create_environment(
    plane: Plane, actor: Admin, project: ProjectKey, body: schema.EnvironmentPost
) -> JsonObject:
    return environments.create_environment(plane, actor, project, environment_request(body))


@router.get("/{environmentKey}", response_model=schema.Environment, summary="Get an environment")
def get_environment(
    plane: Plane, actor: Reader, project: ProjectKey, environment: EnvironmentKey
) -> JsonObject:
    return environments.get_environment(plane, actor, project, environment)


@router.patch(
    "/{environmentKey}", response_model=schema.Environment, summary="Update an environment"
)
def patch_environment(
    plane: Plane, actor: Admin, project: ProjectKey, environment: EnvironmentKey, body: PatchBody
) -> JsonObject:
    return environments.patch_environment(plane, actor, project, environment, body)


@router.delete(
    "/{environmentKey}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete an environment with its segments",
)
def delete_environment(
    plane: Plane, actor: Admin, project: ProjectKey, environment: EnvironmentKey
) -> Response:
    environments.delete_environment(plane, actor, project, environment)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/{environmentKey}/apiKey",
    response_model=schema.Environment,
    summary="Reset the SDK key; the old key works until `expiry`",
)
def reset_sdk_key(
    plane: Plane,
    actor: Admin,
    project: ProjectKey,
    environment: EnvironmentKey,
    expiry: Expiry = None,
) -> JsonObject:
    return environments.reset_key(plane, actor, project, environment, "sdk", expiry_ms=expiry)


@router.post(
    "/{environmentKey}/mobileKey",
    response_model=schema.Environment,
    summary="Reset the mobile key; the old key works until `expiry`",
)
def reset_mobile_key(
    plane: Plane,
    actor: Admin,
    project: ProjectKey,
    environment: EnvironmentKey,
    expiry: Expiry = None,
) -> JsonObject:
    return environments.reset_key(plane, actor, project, environment, "mobile", expiry_ms=expiry)
