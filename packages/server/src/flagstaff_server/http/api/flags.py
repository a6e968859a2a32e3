"""Flag endpoints of the management API (`/api/v2/flags/{projectKey}[/{featureFlagKey}]`) in
LaunchDarkly's REST v2 shapes. Handlers parse, call one use case in `services.flags`, and answer.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader, require
from flagstaff_server.http.api.payload import (
    expected_version,
    is_semantic_patch,
    json_response,
    read_json,
)
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import automated_releases, copy, flag_listing, flags
from flagstaff_server.services.access import Actor, authorize, authorize_accesses
from flagstaff_server.services.edit import parse_edit
from flagstaff_server.services.edit_access import flag_edit_needs

router = PrefixedRouter(prefix="/flags", tags=["Feature flags"])

# Reader here; the use case checks writer rights per changed environment.
Editor = Annotated[Actor, Depends(require("reader"))]
ProjectWriter = Annotated[Actor, Depends(require("writer", env=None))]

JSON_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH_BODY = {
    "requestBody": {
        "required": True,
        "description": "A JSON Patch array, `{comment, patch}` or `{comment, merge}`; or, with "
        "`Content-Type: application/json; domain-model=launchdarkly.semanticpatch`, a semantic "
        "patch `{comment, environmentKey, instructions}`.",
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        {"type": "array", "items": {"type": "object"}},
                        {"type": "object"},
                    ]
                }
            }
        },
    }
}


def environments_of(env: list[str] | None) -> tuple[str, ...] | None:
    """`env` may repeat or hold a comma-separated list."""
    if not env:
        return None
    return tuple(part.strip() for value in env for part in value.split(",") if part.strip())


@router.get("/{projectKey}", summary="List feature flags")
async def list_flags(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter name
    plane: Plane,
    actor: Reader,
    env: Annotated[list[str] | None, Query()] = None,
    tag: str | None = None,
    limit: Annotated[int, Query(ge=1, le=flag_listing.MAX_LIMIT)] = flag_listing.DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0)] = 0,
    archived: bool | None = None,
    summary: bool | None = None,
    filters: Annotated[str | None, Query(alias="filter")] = None,
) -> Response:
    query = flag_listing.FlagQuery(
        environments=environments_of(env),
        tag=tag,
        archived=archived,
        limit=limit,
        offset=offset,
        summary=bool(summary),
    )
    if filters:
        query = flag_listing.parse_filter(filters, query)
    return json_response(await run_in_threadpool(flag_listing.list_flags, plane, projectKey, query))


@router.post(
    "/{projectKey}", status_code=201, summary="Create a feature flag", openapi_extra=JSON_BODY
)
async def create_flag(
    projectKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: ProjectWriter,
) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(flags.create_flag, plane, actor, projectKey, body)
    return json_response(created, status=201)


@router.get("/{projectKey}/{featureFlagKey}", summary="Get a feature flag")
async def get_flag(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
    env: Annotated[list[str] | None, Query()] = None,
) -> Response:
    flag = await run_in_threadpool(
        flags.get_flag, plane, projectKey, featureFlagKey, environments=environments_of(env)
    )
    return json_response(flag)


@router.patch(
    "/{projectKey}/{featureFlagKey}",
    summary="Update a feature flag (JSON Patch or semantic patch)",
    openapi_extra=PATCH_BODY,
)
async def patch_flag(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Editor,
) -> Response:
    # A read-only token is refused before its body is looked at.
    authorize(actor, "writer", project=projectKey, environment=actor.environment)
    edit = parse_edit(
        await read_json(request),
        semantic=is_semantic_patch(request),
        expected_version=expected_version(request),
    )
    authorize_accesses(actor, flag_edit_needs(edit.edit, project=projectKey, key=featureFlagKey))
    if automated_releases.is_release_patch(edit):
        patched = await run_in_threadpool(
            automated_releases.patch_release, plane, actor, projectKey, featureFlagKey, edit
        )
        return json_response(patched)
    patched = await run_in_threadpool(
        flags.patch_flag, plane, actor, projectKey, featureFlagKey, edit
    )
    return json_response(patched)


@router.delete("/{projectKey}/{featureFlagKey}", status_code=204, summary="Delete a feature flag")
async def delete_flag(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    plane: Plane,
    actor: ProjectWriter,
) -> Response:
    await run_in_threadpool(flags.delete_flag, plane, actor, projectKey, featureFlagKey)
    return Response(status_code=204)


@router.post(
    "/{projectKey}/{featureFlagKey}/copy",
    status_code=201,
    summary="Copy a flag's configuration from one environment to another",
    openapi_extra=JSON_BODY,
)
async def copy_flag_config(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Editor,
) -> Response:
    copy_request = copy.parse_copy(await read_json(request))
    copied = await run_in_threadpool(
        copy.copy_flag_config, plane, actor, projectKey, featureFlagKey, copy_request
    )
    return json_response(copied, status=201)
