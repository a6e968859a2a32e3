"""FastAPI dependencies every management endpoint uses: the control plane and the caller.

`require(role)` authenticates the `Authorization` header (or, without one, the web UI's session
cookie plus its CSRF header on writes) and checks role and scope against the route's
`projectKey`/`environmentKey` path parameters; the rules live in `services.access`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import APIKeyHeader
from starlette.concurrency import run_in_threadpool

from flagstaff_server.domain.policy import parse_resource
from flagstaff_server.errors import Forbidden
from flagstaff_server.http.api.route_actions import ROUTE_ACTIONS, Needs, resource_text
from flagstaff_server.services import sessions
from flagstaff_server.services.access import (
    Actor,
    authorize,
    authorize_accesses,
    screen_secret,
    stored_caller,
)
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import Role

# Documents the header in OpenAPI; errors come from `authenticate`, not from FastAPI.
ACCESS_TOKEN = APIKeyHeader(
    name="Authorization",
    auto_error=False,
    scheme_name="accessToken",
    description="An access token, raw (as LaunchDarkly sends it) or as `Bearer <token>`.",
)


PARAMETER = re.compile(r"\{([A-Za-z]+)\}")
# The path parameters `require` reads scope from; routes name their keys with these.
PROJECT_PARAM = "projectKey"
ENVIRONMENT_PARAM = "environmentKey"
# The web UI's session: an HttpOnly cookie, and the CSRF token the page sends on writes.
SESSION_COOKIE = "flagstaff_session"
CSRF_HEADER = "X-CSRF-Token"
ProjectKey = Annotated[str, Path(alias=PROJECT_PARAM, description="The project key")]
EnvironmentKey = Annotated[str, Path(alias=ENVIRONMENT_PARAM, description="The environment key")]


async def plane_of(request: Request) -> ControlPlane:
    plane: ControlPlane = request.app.state.plane
    return plane


Plane = Annotated[ControlPlane, Depends(plane_of)]


def require(
    role: Role,
    *,
    project: str | None = PROJECT_PARAM,
    env: str | None = ENVIRONMENT_PARAM,
) -> Callable[..., Awaitable[Actor]]:
    """A dependency yielding the authenticated `Actor`, who must hold `role` on the resource.

    `project` and `env` name the path parameters that hold the resource's project and environment
    keys (None: the route has none). Use `Annotated[Actor, Depends(require("writer"))]`; finer
    checks inside a handler call `services.access.authorize` directly.
    """

    async def dependency(
        request: Request, authorization: Annotated[str | None, Depends(ACCESS_TOKEN)]
    ) -> Actor:
        # the plane straight from the app, not as a sub-dependency: one fewer to solve per request
        actor = await caller(request, request.app.state.plane, authorization)
        params = request.path_params
        authorize(
            actor,
            role,
            project=params.get(project) if project else None,
            environment=params.get(env) if env else None,
        )
        if actor.has_policy:
            check_route_action(request, actor)
        return actor

    return dependency


def route_path(request: Request) -> str:
    """The declared route template (`/api/v2/flags/{projectKey}`) that, filled with this
    request's path parameters, gives its path; '' when none does."""
    path = request.url.path
    params = request.path_params
    for method, template in ROUTE_ACTIONS:
        if (
            method == request.method
            and set(PARAMETER.findall(template)) == set(params)
            and resource_text(template, params) == path
        ):
            return template
    return ""


def check_route_action(request: Request, actor: Actor) -> None:
    """Ask the actor's policy about the route's declared action (`route_actions`); a route
    declared `FROM_BODY` is asked by its handler, and an undeclared one is refused."""
    declared = ROUTE_ACTIONS.get((request.method, route_path(request)))
    if declared is None:
        raise Forbidden("this route declares no action, so no policy can allow it")
    if isinstance(declared, Needs):
        target = resource_text(declared.resource, request.path_params)
        resource = parse_resource(target)
        authorize_accesses(actor, [(action, resource) for action in declared.actions])


async def caller(request: Request, plane: ControlPlane, authorization: str | None) -> Actor:
    """The actor behind the `Authorization` header, else behind the session cookie. Only a
    session, or a token not verified a moment ago (`plane.callers`), needs the store: one thread
    hop; the admin token and cached tokens are answered here on the loop."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if authorization is None and cookie:
        return await run_in_threadpool(
            session_caller, plane, cookie, request.method, request.headers.get(CSRF_HEADER)
        )
    screened = screen_secret(authorization, admin_token=plane.admin_token)
    if isinstance(screened, Actor):
        return screened
    cached = plane.callers.get(screened)
    if cached is not None:
        return cached
    generation = plane.callers.generation()
    actor = await run_in_threadpool(token_caller, plane, screened)
    plane.callers.put(screened, actor, generation=generation)
    return actor


def session_caller(plane: ControlPlane, cookie: str, method: str, csrf_header: str | None) -> Actor:
    with plane.read() as uow:
        actor, _ = sessions.session_actor(
            plane, uow, cookie, method=method, csrf_header=csrf_header
        )
        return actor


def token_caller(plane: ControlPlane, secret_hash: str) -> Actor:
    with plane.read() as uow:
        return stored_caller(uow, secret_hash)


Reader = Annotated[Actor, Depends(require("reader"))]
Writer = Annotated[Actor, Depends(require("writer"))]
Admin = Annotated[Actor, Depends(require("admin"))]
