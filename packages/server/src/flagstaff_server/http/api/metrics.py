"""Metric endpoints in LaunchDarkly's REST v2 shapes: `/api/v2/metrics/{projectKey}[/{metricKey}]`.
Handlers parse, call one use case in `services.metrics`, and answer."""

from __future__ import annotations

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, ProjectKey, Reader, Writer
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import metrics

router = PrefixedRouter(prefix="/metrics", tags=["Metrics (beta)"])

BODY = {
    "requestBody": {
        "required": True,
        "description": "`MetricPost`: {key, kind (custom|pageview|click), eventKey (custom), "
        "isNumeric, successCriteria (HigherThanBaseline|LowerThanBaseline), unit, "
        "unitAggregationType (sum|average), randomizationUnits, name, description, tags, "
        "eventDefault, selector and urls (click/pageview)}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH = {
    "requestBody": {
        "required": True,
        "description": "A JSON Patch of the metric, as a bare array or {patch, comment}",
        "content": {"application/json": {"schema": {"type": "array"}}},
    }
}


@router.get("/{projectKey}", summary="List the project's metrics")
async def list_metrics(project: ProjectKey, plane: Plane, actor: Reader) -> Response:
    return json_response(await run_in_threadpool(metrics.list_metrics, plane, project))


@router.post("/{projectKey}", status_code=201, summary="Create a metric", openapi_extra=BODY)
async def create_metric(
    project: ProjectKey, request: Request, plane: Plane, actor: Writer
) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(metrics.create_metric, plane, actor, project, body)
    return json_response(created, status=201)


@router.get("/{projectKey}/{metricKey}", summary="Get a metric")
async def get_metric(
    project: ProjectKey,
    metricKey: str,  # noqa: N803 - LaunchDarkly's parameter name
    plane: Plane,
    actor: Reader,
) -> Response:
    return json_response(await run_in_threadpool(metrics.get_metric, plane, project, metricKey))


@router.patch(
    "/{projectKey}/{metricKey}", summary="Edit a metric (JSON Patch)", openapi_extra=PATCH
)
async def patch_metric(
    project: ProjectKey,
    metricKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(metrics.patch_metric, plane, actor, project, metricKey, body)
    return json_response(updated)


@router.delete("/{projectKey}/{metricKey}", status_code=204, summary="Delete a metric")
async def delete_metric(
    project: ProjectKey,
    metricKey: str,  # noqa: N803
    plane: Plane,
    actor: Writer,
) -> Response:
    await run_in_threadpool(metrics.delete_metric, plane, actor, project, metricKey)
    return Response(status_code=204)
