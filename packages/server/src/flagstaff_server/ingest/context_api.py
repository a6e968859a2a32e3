"""Management API routes for the contexts seen under `/api/v2/insights/{project}/{env}`: the
context index searched by kind, key and attribute, and one context with its recent evaluations
(the feature events that name it). Thin: parse, ask the analytics store, shape the answer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from flagstaff_server.errors import NotFound, ValidationError
from flagstaff_server.http.api.access import EnvironmentKey, Plane, ProjectKey, Reader
from flagstaff_server.ingest.context_search import AttributeTest, evaluations_of
from flagstaff_server.ingest.insight_api import analytics_of, check_environment

router = APIRouter(prefix="/insights/{projectKey}/{environmentKey}", tags=["insights"])

RECENT_PAYLOADS = 200
"""How many of the environment's newest raw payloads a context's evaluations are read from: a
bound on the work of one page view, so older evaluations are not shown."""


@router.get("/contexts", summary="Contexts seen most recently, searched by kind, key, attribute")
def recent_contexts(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    kind: Annotated[str | None, Query(max_length=255)] = None,
    key: Annotated[str | None, Query(max_length=1024, description="part of the key")] = None,
    attribute: Annotated[str | None, Query(max_length=255)] = None,
    value: Annotated[str | None, Query(max_length=1024, description="with `attribute`")] = None,
) -> dict[str, Any]:
    if value is not None and not attribute:
        raise ValidationError("a value needs the attribute it is of", path="/value")
    check_environment(plane, project, environment)
    store = analytics_of(request)
    test = AttributeTest(name=attribute, value=value) if attribute else None
    found = store.search_contexts(
        project,
        environment,
        kind=kind or None,
        key_part=key or None,
        keep=test.matches if test else lambda _context: True,
        limit=limit,
    )
    return {
        "items": [{"lastSeen": at, "context": context} for at, context in found],
        "totalCount": store.context_count(project, environment),
    }


@router.get(
    "/contexts/{contextKind}/{contextKey}",
    summary="One context seen, with its recent evaluations",
)
def context_detail(
    request: Request,
    plane: Plane,
    actor: Reader,
    project: ProjectKey,
    environment: EnvironmentKey,
    context_kind: Annotated[str, Path(alias="contextKind", max_length=255)],
    context_key: Annotated[str, Path(alias="contextKey", max_length=1024)],
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    check_environment(plane, project, environment)
    store = analytics_of(request)
    seen = store.seen_context(project, environment, context_kind, context_key)
    if seen is None:
        raise NotFound(f"no context {context_kind}:{context_key!r} seen in {environment!r}")
    bodies = store.newest_payloads(project, environment, limit=RECENT_PAYLOADS)
    return {
        "lastSeen": seen[0],
        "context": seen[1],
        "evaluations": evaluations_of(bodies, kind=context_kind, key=context_key, limit=limit),
    }
