"""Builds the management API: one FastAPI app serving `/api/v2/...`, its OpenAPI document at
`/api/v2/openapi.json` (Swagger UI at `/api/v2/docs`, served by `reference`), every error through
`http.problem`.

Routers are listed here; each is a thin module that parses, calls one use case and shapes the
answer. Nothing else in the process knows FastAPI.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.openapi.utils import get_openapi

from flagstaff_server.http import problem
from flagstaff_server.http.api import (
    accounts,
    approval_requests,
    audit_log,
    automated_releases,
    caller,
    code_refs,
    environments,
    experiments,
    flag_triggers,
    flags,
    imports,
    integrations,
    members,
    metrics,
    notices,
    projects,
    reference,
    roles,
    scheduled_changes,
    schema,
    scim_tokens,
    segments,
    sessions,
    sso,
    teams,
    tokens,
    webhooks,
)
from flagstaff_server.http.api.body_limit import BodyLimit
from flagstaff_server.http.api.content import screen_request
from flagstaff_server.http.api.direct_routes import DirectRoutes
from flagstaff_server.http.api.headers import SecurityHeaders
from flagstaff_server.ingest import context_api, insight_api
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.settings import DEFAULT_API_MAX_BODY_BYTES

PREFIX = "/api/v2"
OPENAPI_PATH = f"{PREFIX}/openapi.json"

ERROR_STATUSES = {
    "400": "Invalid request: the body, a parameter or the resulting data is invalid; `path` "
    "names the offending field",
    "401": "No valid access token in `Authorization`",
    "403": "The access token's role or scope does not allow this",
    "404": "No such resource",
    "405": "Approval required: the change alters what an environment requiring approval "
    "serves; ask for it with an approval request",
    "409": "Conflict: the key is taken, or the version test failed",
    "413": "The request body is larger than the server's limit (1 MiB unless configured)",
    "415": "The request body is not JSON",
    "503": "The store is unavailable",
}


def routers() -> Sequence[APIRouter]:
    return [
        projects.router,
        environments.router,
        flags.router,
        flag_triggers.router,
        metrics.router,
        code_refs.router,
        experiments.router,
        scheduled_changes.router,
        automated_releases.router,
        approval_requests.flag_router,
        approval_requests.generic_router,
        segments.router,
        imports.router,
        tokens.router,
        scim_tokens.router,
        audit_log.router,
        sessions.router,
        caller.router,
        sso.router,
        accounts.router,
        roles.router,
        members.router,
        teams.router,
        notices.router,
        webhooks.router,
        integrations.router,
        insight_api.router,
        context_api.router,
    ]


def document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, with our error answers in place of FastAPI's 422."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    spec = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
    )
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = schema.Problem.model_json_schema(
        ref_template="#/components/schemas/{model}"
    )
    for validation_schema in ("HTTPValidationError", "ValidationError"):
        schemas.pop(validation_schema, None)
    problem_content = {
        problem.PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}
    }
    for operations in spec.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for code, description in ERROR_STATUSES.items():
                if code in ("413", "415") and method.upper() not in ("POST", "PUT", "PATCH"):
                    continue
                if code == "405" and method.upper() not in ("POST", "PATCH", "DELETE"):
                    continue
                responses.setdefault(code, {"description": description, "content": problem_content})
    app.openapi_schema = spec
    return spec


def build_api(
    plane: ControlPlane,
    *,
    version: str,
    max_body_bytes: int = DEFAULT_API_MAX_BODY_BYTES,
    direct_routes: bool = True,
) -> FastAPI:
    """The API app; `direct_routes` False sends every request through FastAPI's own routing
    and dependency solving (a test compares the two)."""
    app = FastAPI(
        title="Flagstaff management API",
        description="A subset of LaunchDarkly's REST API v2. Authenticate with an access token in "
        "`Authorization` (raw, or `Bearer <token>`).",
        version=version,
        openapi_url=OPENAPI_PATH,
        docs_url=None,  # FastAPI's page loads Swagger UI from a CDN; `reference` serves our own
        redoc_url=None,
        dependencies=[Depends(screen_request)],
    )
    app.state.plane = plane
    # added first, so innermost of ours: inside the body limit and the headers, before FastAPI
    if direct_routes:
        app.add_middleware(DirectRoutes)
    app.add_middleware(BodyLimit, max_body_bytes=max_body_bytes)
    app.add_middleware(SecurityHeaders)  # added last, so outermost: the 413 gets its headers too
    problem.install(app)
    for router in routers():
        app.include_router(router, prefix=PREFIX)
    app.include_router(reference.router(prefix=PREFIX, openapi_url=OPENAPI_PATH, title=app.title))

    def openapi() -> dict[str, Any]:
        return document(app)

    app.openapi = openapi  # type: ignore[method-assign]
    return app
