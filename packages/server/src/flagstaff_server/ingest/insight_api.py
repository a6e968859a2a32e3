"""Management API routes for ingestion's results under `/api/v2/insights/{project}/{env}`:
evaluation time series per flag, flag statuses, the SDK fleet, custom metrics, a JSON-lines
export of raw events, and the quarantine (list, export, reprocess). Thin: parse, ask the
analytics store, shape the answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Path, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from flagstaff_server.errors import NotFound, StoreUnavailable, ValidationError
from flagstaff_server.http.api.access import EnvironmentKey, Plane, ProjectKey, Reader, Writer
from flagstaff_server.http.api.flags import JSON_BODY
from flagstaff_server.http.api.payload import read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.http.problem import json_pointer
from flagstaff_server.ingest import quarantine
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.ingest.flag_status import ACTIVE_WINDOW_MS, STALE_AFTER_MS, flag_status
from flagstaff_server.ingest.fleet import instance_view
from flagstaff_server.ingest.tally import NO_VARIATION

router = PrefixedRouter(prefix="/insights/{projectKey}/{environmentKey}", tags=["insights"])

DAY_MS = 86_400_000
MAX_MS = 253_402_300_799_999
MAX_REPROCESS_IDS = 1_000


def analytics_of(request: Request) -> AnalyticsStore:
    store: AnalyticsStore | None = getattr(request.app.state, "analytics", None)
    if store is None:
        raise StoreUnavailable("this process has no analytics store")
    return store


def now_ms() -> int:
    return int(time.time() * 1000)


def window(start: int | None, end: int | None) -> tuple[int, int]:
    end_ms = now_ms() + 1 if end is None else end
    start_ms = end_ms - DAY_MS if start is None else start
    return start_ms, end_ms


def check_environment(plane: Plane, project: str, environment: str) -> None:
    with plane.read() as uow:
        if not any(env.key == environment for env in uow.environments.list(project)):
            raise NotFound(f"no environment {environment!r} in project {project!r}")


@router.get("/flags/{flagKey}/evaluations", summary="Hourly evaluation counts per variation")
def evaluations(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
    key: Annotated[str, Path(alias="flagKey", description="The flag key")],
    start: Annotated[int | None, Query(alias="from", ge=0, le=MAX_MS)] = None,
    end: Annotated[int | None, Query(alias="to", ge=0, le=MAX_MS)] = None,
) -> dict[str, Any]:
    check_environment(plane, project, environment)
    start_ms, end_ms = window(start, end)
    series = analytics_of(request).evaluation_series(
        project, environment, key, start_ms=start_ms, end_ms=end_ms
    )
    hours: dict[int, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for hour, variation, count in series:
        name = "none" if variation == NO_VARIATION else str(variation)
        hours.setdefault(hour, {})[name] = count
        totals[name] = totals.get(name, 0) + count
    return {
        "flagKey": key,
        "from": start_ms,
        "to": end_ms,
        "series": [{"hour": hour, "variations": counts} for hour, counts in hours.items()],
        "totals": totals,
        "total": sum(totals.values()),
    }


@router.get("/flag-statuses", summary="Status of every flag from its evaluations")
def statuses(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
) -> dict[str, Any]:
    check_environment(plane, project, environment)
    now = now_ms()
    found = analytics_of(request).flag_activity(
        project, environment, recent_ms=now - ACTIVE_WINDOW_MS, long_ms=now - STALE_AFTER_MS
    )
    with plane.read() as uow:
        created = {flag.key: flag.doc.get("creationDate") for flag in uow.flags.list(project)}
    items = []
    for key in sorted(set(created) | set(found)):
        made = created.get(key)
        activity = found.get(key)
        items.append(
            {
                "flagKey": key,
                "status": flag_status(
                    created_ms=made if isinstance(made, int) else None,
                    activity=activity,
                    now_ms=now,
                ),
                "lastEvaluated": activity.last_ms if activity else None,
                "known": key in created,
            }
        )
    return {"items": items}


@router.get("/sdk-instances", summary="SDK instances reporting diagnostics (the fleet)")
def fleet(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
) -> dict[str, Any]:
    check_environment(plane, project, environment)
    # the control plane's clock: a test moves it to see instances age out without waiting
    now = int(plane.clock().timestamp() * 1000)
    rows = analytics_of(request).sdk_instances(project, environment)
    items = [instance_view(row, now_ms=now) for row in rows]
    return {
        "items": items,
        "stale": sum(1 for item in items if item["staleFlagData"]),
        "running": sum(1 for item in items if not item["stopped"]),
        "stopped": sum(1 for item in items if item["stopped"]),
    }


@router.get("/metrics/{eventKey}", summary="Custom event totals and metric values")
def metric(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
    key: Annotated[str, Path(alias="eventKey", description="The custom event key")],
) -> dict[str, Any]:
    check_environment(plane, project, environment)
    events, valued, total = analytics_of(request).metric(project, environment, key)
    return {
        "eventKey": key,
        "events": events,
        "withValue": valued,
        "sum": total,
        "mean": total / valued if valued else None,
    }


@router.get(
    "/events",
    summary="Export raw events as JSON lines",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
def export(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
    start: Annotated[int | None, Query(alias="from", ge=0, le=MAX_MS)] = None,
    end: Annotated[int | None, Query(alias="to", ge=0, le=MAX_MS)] = None,
) -> StreamingResponse:
    check_environment(plane, project, environment)
    start_ms, end_ms = window(start, end)
    store = analytics_of(request)
    lines: Iterator[bytes] = store.export(project, environment, start_ms=start_ms, end_ms=end_ms)
    return StreamingResponse(lines, media_type="application/x-ndjson")


@router.get("/quarantine", summary="Payloads that failed processing on their own (no bodies)")
def quarantine_list(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    check_environment(plane, project, environment)
    store = analytics_of(request)
    return {
        "items": quarantine.listing(store, project, environment, limit=limit),
        "totalCount": quarantine.count(store, project, environment),
    }


@router.get(
    "/quarantine/export",
    summary="Export the quarantined payloads, bodies included, as JSON lines",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
def quarantine_export(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
) -> StreamingResponse:
    check_environment(plane, project, environment)
    lines = quarantine.export(analytics_of(request), project, environment)
    return StreamingResponse(lines, media_type="application/x-ndjson")


@router.post(
    "/quarantine/reprocess",
    summary="Process quarantined payloads again (all, or those named in payloadIds)",
    openapi_extra=JSON_BODY,
)
async def quarantine_reprocess(
    request: Request,
    plane: Plane,
    actor: Writer,
    project: ProjectKey,
    environment: EnvironmentKey,
) -> dict[str, Any]:
    await run_in_threadpool(check_environment, plane, project, environment)
    wanted = reprocess_ids(await read_json(request) if await request.body() else {})
    now = int(plane.clock().timestamp() * 1000)
    done = await run_in_threadpool(
        quarantine.reprocess,
        analytics_of(request),
        project,
        environment,
        payload_ids=wanted,
        now_ms=now,
    )
    return {
        "reprocessed": done.reprocessed,
        "failed": [{"payloadId": f.payload_id, "error": f.error} for f in done.failed],
        "remaining": done.remaining,
    }


def reprocess_ids(body: Any) -> list[str] | None:
    """`{}` (or no body): every payload held; `{"payloadIds": [...]}`: those."""
    if not isinstance(body, dict):
        raise ValidationError("expected a JSON object", path="")
    for name in body:
        if name != "payloadIds":
            raise ValidationError(f"unknown field {name!r}", path=json_pointer([name]))
    if "payloadIds" not in body:
        return None
    ids = body["payloadIds"]
    if not isinstance(ids, list):
        raise ValidationError("payloadIds must be an array of strings", path="/payloadIds")
    if len(ids) > MAX_REPROCESS_IDS:
        raise ValidationError(
            f"at most {MAX_REPROCESS_IDS} payload ids per request", path="/payloadIds"
        )
    for index, value in enumerate(ids):
        if not isinstance(value, str) or not 0 < len(value) <= 255:
            raise ValidationError(
                "a payload id is a string of 1 to 255 characters", path=f"/payloadIds/{index}"
            )
    return ids
