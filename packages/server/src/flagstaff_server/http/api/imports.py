"""Environment-wide flag endpoints: import a LaunchDarkly data file, export one environment in that
format, and evaluate every flag for a context. Handlers parse, call one use case, and answer.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.flags import JSON_BODY
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import context_evaluation, imports

router = PrefixedRouter(prefix="/projects", tags=["Import and export"])


@router.post(
    "/{projectKey}/environments/{environmentKey}/import",
    summary="Import a LaunchDarkly data file into an environment (all or nothing)",
    openapi_extra=JSON_BODY,
)
async def import_data(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    data = await read_json(request)
    summary = await run_in_threadpool(
        imports.import_data, plane, actor, projectKey, environmentKey, data
    )
    return json_response(summary)


@router.get(
    "/{projectKey}/environments/{environmentKey}/export",
    summary="Export an environment as a LaunchDarkly data file",
)
async def export_data(
    projectKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
) -> Response:
    data = await run_in_threadpool(imports.export_data, plane, projectKey, environmentKey)
    return json_response(data)


@router.post(
    "/{projectKey}/environments/{environmentKey}/flags/evaluate",
    summary="Evaluate every flag of the environment for a context",
    openapi_extra=JSON_BODY,
)
async def evaluate_flags(
    projectKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Reader,
    limit: Annotated[int | None, Query(ge=-1)] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    context = await read_json(request)
    result = await run_in_threadpool(
        context_evaluation.evaluate_flags,
        plane,
        projectKey,
        environmentKey,
        context,
        limit=limit,
        offset=offset,
    )
    return json_response(result)
