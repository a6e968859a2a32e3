"""Routes for `/api/v2/projects`: parse, call one `services.projects` use case, shape the answer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Query, Response, status

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Admin, Plane, ProjectKey, Reader
from flagstaff_server.http.api.environments import environment_request
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import projects
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/projects", tags=["projects"])

Expand = Annotated[
    str | None,
    Query(description="Comma-separated; `environments` includes each project's environments"),
]
Limit = Annotated[int | None, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0)]
PatchBody = Annotated[
    Any,
    Body(
        description="A JSON Patch array, `{comment, patch}` or `{comment, merge}`",
        openapi_examples={
            "rename": {"value": [{"op": "replace", "path": "/name", "value": "New name"}]}
        },
    ),
]


def expands(expand: str | None, what: str) -> bool:
    return expand is not None and what in {part.strip() for part in expand.split(",")}


def project_request(body: schema.ProjectPost) -> projects.ProjectRequest:
    availability = body.default_client_side_availability
    return projects.ProjectRequest(
        key=body.key,
        name=body.name,
        tags=tuple(body.tags or ()),
        description=body.description or "",
        include_in_snippet_by_default=bool(body.include_in_snippet_by_default),
        default_client_side_availability=None
        if availability is None
        else {
            "usingMobileKey": availability.using_mobile_key,
            "usingEnvironmentId": availability.using_environment_id,
        },
        environments=None
        if body.environments is None
        else [environment_request(env) for env in body.environments],
    )


@router.get("", response_model=schema.Projects, summary="List projects")
def list_projects(
    plane: Plane, actor: Reader, expand: Expand = None, limit: Limit = None, offset: Offset = 0
) -> JsonObject:
    items, total = projects.list_projects(
        plane, actor, expand=expands(expand, "environments"), limit=limit, offset=offset
    )
    return {
        "_links": {"self": {"href": "/api/v2/projects", "type": "application/json"}},
        "items": items,
        "totalCount": total,
    }


@router.post(
    "",
    response_model=schema.ProjectRep,
    status_code=status.HTTP_201_CREATED,
    summary="Create a project (and its environments; production and test by default)",
)
def create_project(plane: Plane, actor: Admin, body: schema.ProjectPost) -> JsonObject:
    return projects.create_project(plane, actor, project_request(body))


@router.get("/{projectKey}", response_model=schema.Project, summary="Get a project")
def get_project(
    plane: Plane, actor: Reader, project: ProjectKey, expand: Expand = None
) -> JsonObject:
    return projects.get_project(plane, actor, project, expand=expands(expand, "environments"))


@router.patch("/{projectKey}", response_model=schema.Project, summary="Update a project")
def patch_project(plane: Plane, actor: Admin, project: ProjectKey, body: PatchBody) -> JsonObject:
    return projects.patch_project(plane, actor, project, body)


@router.delete(
    "/{projectKey}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete a project with its environments, flags and segments",
)
def delete_project(plane: Plane, actor: Admin, project: ProjectKey) -> Response:
    projects.delete_project(plane, actor, project)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
