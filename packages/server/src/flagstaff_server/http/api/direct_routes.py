"""The management API's hottest routes answered without FastAPI's per-request machinery: an ASGI
layer inside the API's own middleware (security headers, body limit) that serves a flag read, a
flag patch and the UI's session status by calling the very dependency and handler functions the
FastAPI routes declare, in the order FastAPI would solve them, and hands every other request on.

It must not decide anything itself: screening, authentication, authorization, the use case and
the answer are the routes' own code, so the two paths cannot drift; only FastAPI's dependency
solver, router walk, exception middleware and exit stack are skipped (docs/management-api-
performance.md). With FastAPI's telemetry on, every request goes through FastAPI so its spans
name the route.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from starlette.requests import Request
from starlette.responses import Response

from flagstaff_server.asgi import ASGIApp, Receive, Scope, Send
from flagstaff_server.errors import FlagstaffError
from flagstaff_server.http.api import flags, sessions
from flagstaff_server.http.api.access import ACCESS_TOKEN, PROJECT_PARAM, Reader
from flagstaff_server.http.api.content import screen_request
from flagstaff_server.http.problem import answer_error
from flagstaff_server.services.access import Actor
from flagstaff_server.services.plane import ControlPlane

PREFIX = "/api/v2/"
FLAG_PARAM = "featureFlagKey"

Answer = Callable[[Request, ControlPlane], Awaitable[Response]]


def declared(annotation: Any) -> Callable[..., Awaitable[Actor]]:
    """The dependency function a route parameter's `Annotated[Actor, Depends(...)]` declares:
    taken from the FastAPI routes' own annotations, so the two paths cannot drift."""
    dependency: Callable[..., Awaitable[Actor]] = get_args(annotation)[1].dependency
    return dependency


READER = declared(Reader)
EDITOR = declared(flags.Editor)


@dataclass(frozen=True, slots=True)
class DirectRoute:
    """`method` on a path of `PREFIX` + `segments`, where a None segment is a path parameter
    named in `params` (in order); Starlette's `{name}` matches one non-empty segment too."""

    method: str
    segments: tuple[str | None, ...]
    params: tuple[str, ...]
    answer: Answer

    def match(self, method: str, parts: list[str]) -> dict[str, str] | None:
        if method != self.method or len(parts) != len(self.segments):
            return None
        values: dict[str, str] = {}
        names = iter(self.params)
        for part, segment in zip(parts, self.segments, strict=True):
            if segment is None:
                if not part:
                    return None
                values[next(names)] = part
            elif part != segment:
                return None
        return values


async def authorization(request: Request) -> str | None:
    return await ACCESS_TOKEN(request)


async def get_flag(request: Request, plane: ControlPlane) -> Response:
    actor = await READER(request, await authorization(request))
    params = request.path_params
    env = request.query_params.getlist("env")
    return await flags.get_flag(
        params[PROJECT_PARAM], params[FLAG_PARAM], plane, actor, env=env or None
    )


async def patch_flag(request: Request, plane: ControlPlane) -> Response:
    actor = await EDITOR(request, await authorization(request))
    params = request.path_params
    return await flags.patch_flag(params[PROJECT_PARAM], params[FLAG_PARAM], request, plane, actor)


async def session_status(request: Request, plane: ControlPlane) -> Response:
    return await sessions.session_status(request, plane)


FLAG = ("flags", None, None)
ROUTES: tuple[DirectRoute, ...] = (
    DirectRoute("GET", FLAG, (PROJECT_PARAM, FLAG_PARAM), get_flag),
    DirectRoute("PATCH", FLAG, (PROJECT_PARAM, FLAG_PARAM), patch_flag),
    DirectRoute("GET", ("session", "status"), (), session_status),
)


def find_route(method: str, path: str) -> tuple[DirectRoute, Mapping[str, str]] | None:
    if not path.startswith(PREFIX):
        return None
    parts = path[len(PREFIX) :].split("/")
    for route in ROUTES:
        params = route.match(method, parts)
        if params is not None:
            return route, params
    return None


class DirectRoutes:
    """ASGI middleware: `ROUTES` here, everything else to `app` (FastAPI's stack)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = None
        if (
            scope["type"] == "http"
            and scope.get("fastapi.telemetry") is None
            and not scope.get("root_path")
        ):
            found = find_route(scope["method"], scope["path"])
        if found is None:
            await self.app(scope, receive, send)
            return
        route, params = found
        scope["path_params"] = dict(params)
        request = Request(scope, receive)
        try:
            # the app-wide dependency first, as FastAPI solves it before the route's own
            await screen_request(request)
            response = await route.answer(request, scope["app"].state.plane)
        except FlagstaffError as error:
            response = answer_error(request, error)
        await response(scope, receive, send)
