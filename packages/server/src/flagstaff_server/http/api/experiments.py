"""Experiment endpoints in LaunchDarkly's REST v2 shapes:
`/api/v2/projects/{projectKey}/environments/{environmentKey}/experiments[/{experimentKey}]`,
its `iterations`, and `…/metrics/{metricKey}/results?iterationId=` (the results representation of
spec ≤ v17.2, extended: docs/experiments.md); Flagstaff's `…/exposures?iterationId=` gives the
units per treatment over time. Handlers parse, call one use case, and answer; the
results' aggregation runs on the analytics store of this process."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import EnvironmentKey, Plane, ProjectKey, Reader, Writer
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.ingest.insight_api import analytics_of
from flagstaff_server.ingest.metric_totals import exposure_counts, metric_totals
from flagstaff_server.services import experiment_results, experiments
from flagstaff_server.services.experiment_results import (
    ExposureCount,
    IterationScope,
    MetricScope,
    Totals,
)

router = PrefixedRouter(
    prefix="/projects/{projectKey}/environments/{environmentKey}/experiments",
    tags=["Experiments (beta)"],
)

CREATE = {
    "requestBody": {
        "required": True,
        "description": "`ExperimentPost`: {key, name, description?, tags?, iteration: "
        "{hypothesis, metrics: [{key}], primarySingleMetricKey?, treatments: [{name, baseline, "
        "allocationPercent, parameters: [{flagKey, variationId}]}], flags: {flagKey: {ruleId "
        "(a rule's _id or 'fallthrough'), flagConfigVersion, notInExperimentVariationId?}}, "
        "randomizationUnit?}}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH = {
    "requestBody": {
        "required": True,
        "description": "A semantic patch {comment?, instructions} with the kinds updateName, "
        "updateDescription {value}, startIteration, stopIteration {winningTreatmentId?, "
        "winningReason?}, archiveExperiment, restoreExperiment",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
ITERATION = {
    "requestBody": {
        "required": True,
        "description": "`IterationInput`, as in the create body's `iteration`",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


@router.get("", summary="List the environment's experiments")
async def list_experiments(
    project: ProjectKey, environment: EnvironmentKey, plane: Plane, actor: Reader
) -> Response:
    listed = await run_in_threadpool(experiments.list_experiments, plane, project, environment)
    return json_response(listed)


@router.post("", status_code=201, summary="Create an experiment", openapi_extra=CREATE)
async def create_experiment(
    project: ProjectKey, environment: EnvironmentKey, request: Request, plane: Plane, actor: Writer
) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(
        experiments.create_experiment, plane, actor, project, environment, body
    )
    return json_response(created, status=201)


@router.get("/{experimentKey}", summary="Get an experiment")
async def get_experiment(
    project: ProjectKey,
    environment: EnvironmentKey,
    experimentKey: str,  # noqa: N803 - LaunchDarkly's parameter name
    plane: Plane,
    actor: Reader,
) -> Response:
    found = await run_in_threadpool(
        experiments.get_experiment, plane, project, environment, experimentKey
    )
    return json_response(found)


@router.patch(
    "/{experimentKey}",
    summary="Rename, start or stop an iteration, archive or restore (semantic patch)",
    openapi_extra=PATCH,
)
async def patch_experiment(
    project: ProjectKey,
    environment: EnvironmentKey,
    experimentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(
        experiments.patch_experiment, plane, actor, project, environment, experimentKey, body
    )
    return json_response(updated)


@router.post(
    "/{experimentKey}/iterations",
    summary="Add a draft iteration (replaces a draft not started)",
    openapi_extra=ITERATION,
)
async def add_iteration(
    project: ProjectKey,
    environment: EnvironmentKey,
    experimentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    added = await run_in_threadpool(
        experiments.add_iteration, plane, actor, project, environment, experimentKey, body
    )
    return json_response(added)


@router.get(
    "/{experimentKey}/metrics/{metricKey}/results",
    summary="Results of one metric of an iteration (default: the current one)",
)
async def metric_results(
    project: ProjectKey,
    environment: EnvironmentKey,
    experimentKey: str,  # noqa: N803
    metricKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Reader,
    iteration_id: Annotated[str | None, Query(alias="iterationId")] = None,
) -> Response:
    def aggregate(scope: MetricScope) -> Sequence[Totals]:
        # Looked up only once the experiment and metric are known to exist: an unknown one is a
        # 404 in any process, the analytics store's absence a 503 only where it matters.
        return metric_totals(analytics_of(request), scope)

    body = await run_in_threadpool(
        experiment_results.metric_results,
        plane,
        aggregate,
        project,
        environment,
        experimentKey,
        metricKey,
        iteration_id,
    )
    return json_response(body)


@router.get(
    "/{experimentKey}/exposures",
    summary="Exposed units per treatment over time (Flagstaff's; default: the current iteration)",
)
async def units_over_time(
    project: ProjectKey,
    environment: EnvironmentKey,
    experimentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Reader,
    iteration_id: Annotated[str | None, Query(alias="iterationId")] = None,
) -> Response:
    def count(scope: IterationScope, bucket_ms: int) -> Sequence[ExposureCount]:
        return exposure_counts(analytics_of(request), scope, bucket_ms)

    body = await run_in_threadpool(
        experiment_results.units_over_time,
        plane,
        count,
        project,
        environment,
        experimentKey,
        iteration_id,
    )
    return json_response(body)
