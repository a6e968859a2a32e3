"""Routes for a project's chat integrations,
`/api/v2/projects/{projectKey}/integrations/{integrationKey}[/{id}[/deliveries]]` with
`integrationKey` `slack` or `generic`: parse, call one `services.integrations` use case, answer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Path, Query, Response, status

from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import integrations
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/projects", tags=["Integrations"])

PATH = "/{projectKey}/integrations/{integrationKey}"
Kind = Annotated[str, Path(alias="integrationKey", description="`slack` or `generic`")]
IntegrationId = Annotated[str, Path(alias="id", description="The integration's `_id`")]
CreateBody = Annotated[
    Any,
    Body(
        description="`{config: {url, secret? (generic only)}, name?, on? (default true), tags?, "
        "statements?}`",
        openapi_examples={
            "slack": {"value": {"config": {"url": "https://hooks.slack.com/services/T/B/X"}}}
        },
    ),
]
PatchBody = Annotated[
    Any,
    Body(description="A JSON Patch (or `{comment, patch}`) of name, on, tags, statements, config"),
]


@router.get(PATH, summary="List a project's chat integrations of one kind")
def list_integrations(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    kind: Kind,
    plane: Plane,
    actor: Reader,
) -> JsonObject:
    return integrations.list_integrations(plane, actor, projectKey, kind)


@router.post(PATH, status_code=201, summary="Send a project's changes to a chat")
def create_integration(
    projectKey: str,  # noqa: N803
    kind: Kind,
    plane: Plane,
    actor: Writer,
    body: CreateBody,
) -> JsonObject:
    return integrations.create_integration(plane, actor, projectKey, kind, body)


@router.get(PATH + "/{id}", summary="Get a chat integration")
def get_integration(
    projectKey: str,  # noqa: N803
    kind: Kind,
    integration_id: IntegrationId,
    plane: Plane,
    actor: Reader,
) -> JsonObject:
    return integrations.get_integration(plane, actor, projectKey, kind, integration_id)


@router.patch(PATH + "/{id}", summary="Edit a chat integration")
def patch_integration(
    projectKey: str,  # noqa: N803
    kind: Kind,
    integration_id: IntegrationId,
    plane: Plane,
    actor: Writer,
    body: PatchBody,
) -> JsonObject:
    return integrations.patch_integration(plane, actor, projectKey, kind, integration_id, body)


@router.delete(PATH + "/{id}", status_code=204, summary="Delete a chat integration")
def delete_integration(
    projectKey: str,  # noqa: N803
    kind: Kind,
    integration_id: IntegrationId,
    plane: Plane,
    actor: Writer,
) -> Response:
    integrations.delete_integration(plane, actor, projectKey, kind, integration_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(PATH + "/{id}/deliveries", summary="A chat integration's deliveries, newest first")
def list_deliveries(
    projectKey: str,  # noqa: N803
    kind: Kind,
    integration_id: IntegrationId,
    plane: Plane,
    actor: Reader,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    offset: Annotated[int, Query(ge=0)] = 0,
    status_filter: Annotated[str | None, Query(alias="status")] = None,
) -> JsonObject:
    items, total = integrations.list_deliveries(
        plane,
        actor,
        projectKey,
        kind,
        integration_id,
        status=status_filter,
        limit=limit,
        offset=offset,
    )
    base = f"{integrations.base_path(projectKey, kind)}/{integration_id}/deliveries"
    return {
        "_links": {"self": {"href": base, "type": "application/json"}},
        "items": items,
        "totalCount": total,
    }
