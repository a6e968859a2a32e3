"""The SCIM 2.0 endpoints under `/scim/v2` as one Starlette app, apart from the management API
(its own media type, `application/scim+json`, its own error bodies, no OpenAPI routes). Handlers
authenticate the SCIM token, parse, call one use case of `services.scim_users` /
`services.scim_groups` and answer; every `FlagstaffError` becomes a SCIM error (RFC 7644 §3.12).
The discovery endpoints (ServiceProviderConfig, ResourceTypes, Schemas) need no token.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from flagstaff_server.domain.scim_listing import Query, parse_query
from flagstaff_server.domain.scim_schema import (
    ERROR_URN,
    GROUP_URN,
    LIST_URN,
    RESOURCE_TYPES,
    SCHEMAS,
    SEARCH_URN,
    SERVICE_PROVIDER_CONFIG,
    USER_URN,
)
from flagstaff_server.errors import (
    Conflict,
    ContentTooLarge,
    FlagstaffError,
    InvalidInput,
    NotFound,
)
from flagstaff_server.http.problem import kind_of
from flagstaff_server.services import scim_groups, scim_users
from flagstaff_server.services.access import Actor
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.scim_access import scim_actor

log = logging.getLogger(__name__)

PREFIX = "/scim/v2"
MEDIA_TYPE = "application/scim+json"
MAX_BODY_BYTES = 1 << 20
Handler = Callable[[Request], Awaitable[Response]]


def is_scim_path(path: str) -> bool:
    return path == PREFIX or path.startswith(f"{PREFIX}/")


def scim_response(body: Any, status: int = 200, location: str | None = None) -> Response:
    headers = {"Location": location} if location else None
    return Response(orjson.dumps(body), status_code=status, media_type=MEDIA_TYPE, headers=headers)


def error_response(error: FlagstaffError) -> Response:
    status = kind_of(error).status
    scim_type = getattr(error, "scim_type", None)
    if scim_type is None and isinstance(error, Conflict):
        scim_type = "uniqueness"
    elif scim_type is None and isinstance(error, InvalidInput) and status == 400:
        scim_type = "invalidValue"
    body: dict[str, Any] = {"schemas": [ERROR_URN], "status": str(status), "detail": error.message}
    if scim_type is not None:
        body["scimType"] = scim_type
    return scim_response(body, status)


def guarded(handler: Handler) -> Handler:
    async def answer(request: Request) -> Response:
        try:
            return await handler(request)
        except FlagstaffError as exc:
            if kind_of(exc).status >= 500:
                log.warning("SCIM request failed: %s", exc.message)
            return error_response(exc)

    return answer


async def read_body(request: Request) -> Any:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ContentTooLarge(f"a SCIM request body is at most {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    try:
        return orjson.loads(b"".join(chunks))
    except orjson.JSONDecodeError:
        raise InvalidInput("the body is not JSON") from None


class ScimApp:
    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane

    async def actor(self, request: Request) -> Actor:
        def find() -> Actor:
            with self.plane.read() as uow:
                return scim_actor(uow, request.headers.get("authorization"))

        return await run_in_threadpool(find)

    def query(self, params: Mapping[str, Any], urn: str) -> Query:
        return parse_query({k: None if v is None else str(v) for k, v in params.items()}, urn)

    def routes(self) -> list[Route]:
        kinds = (
            ("Users", USER_URN, scim_users.list_users, scim_users.get_user, self.user_writes()),
            (
                "Groups",
                GROUP_URN,
                scim_groups.list_groups,
                scim_groups.get_group,
                self.group_writes(),
            ),
        )
        found = [
            Route(f"{PREFIX}/ServiceProviderConfig", guarded(self.config), methods=["GET"]),
            Route(f"{PREFIX}/ResourceTypes", guarded(self.resource_types), methods=["GET"]),
            Route(f"{PREFIX}/ResourceTypes/{{name}}", guarded(self.resource_type), methods=["GET"]),
            Route(f"{PREFIX}/Schemas", guarded(self.schemas), methods=["GET"]),
            Route(f"{PREFIX}/Schemas/{{urn}}", guarded(self.schema), methods=["GET"]),
            Route(f"{PREFIX}/.search", guarded(self.search_all), methods=["POST"]),
        ]
        for name, urn, lister, getter, writes in kinds:
            found += self.resource_routes(name, urn, lister, getter, writes)
        return found

    def user_writes(self) -> tuple[Any, Any, Any, Any]:
        return (
            scim_users.create_user,
            scim_users.replace_user,
            scim_users.patch_user,
            scim_users.delete_user,
        )

    def group_writes(self) -> tuple[Any, Any, Any, Any]:
        return (
            scim_groups.create_group,
            scim_groups.replace_group,
            scim_groups.patch_group,
            scim_groups.delete_group,
        )

    def resource_routes(
        self, name: str, urn: str, lister: Any, getter: Any, writes: tuple[Any, Any, Any, Any]
    ) -> list[Route]:
        create, put, patch, delete = writes
        plane = self.plane

        async def collection(request: Request) -> Response:
            await self.actor(request)
            query = self.query(request.query_params, urn)
            return scim_response(await run_in_threadpool(lister, plane, query))

        async def search(request: Request) -> Response:
            await self.actor(request)
            query = self.query(search_params(await read_body(request)), urn)
            return scim_response(await run_in_threadpool(lister, plane, query))

        async def created(request: Request) -> Response:
            actor = await self.actor(request)
            body = await read_body(request)
            made = await run_in_threadpool(create, plane, actor, body)
            return scim_response(made, 201, location=made["meta"]["location"])

        async def one(request: Request) -> Response:
            await self.actor(request)
            query = self.query(request.query_params, urn)
            found = await run_in_threadpool(getter, plane, request.path_params["id"], query)
            return scim_response(found)

        async def changed(request: Request) -> Response:
            actor = await self.actor(request)
            body = await read_body(request)
            use_case = put if request.method == "PUT" else patch
            done = await run_in_threadpool(use_case, plane, actor, request.path_params["id"], body)
            return scim_response(done)

        async def removed(request: Request) -> Response:
            actor = await self.actor(request)
            await run_in_threadpool(delete, plane, actor, request.path_params["id"])
            return Response(status_code=204)

        base = f"{PREFIX}/{name}"
        return [
            Route(base, guarded(collection), methods=["GET"]),
            Route(base, guarded(created), methods=["POST"]),
            Route(f"{base}/.search", guarded(search), methods=["POST"]),
            Route(f"{base}/{{id}}", guarded(one), methods=["GET"]),
            Route(f"{base}/{{id}}", guarded(changed), methods=["PUT", "PATCH"]),
            Route(f"{base}/{{id}}", guarded(removed), methods=["DELETE"]),
        ]

    async def search_all(self, request: Request) -> Response:
        """`POST /.search` at the root: Users, then Groups (RFC 7644 §3.4.3)."""
        await self.actor(request)
        params = search_params(await read_body(request))
        found: list[Any] = []
        for lister, urn in (
            (scim_users.list_users, USER_URN),
            (scim_groups.list_groups, GROUP_URN),
        ):
            kind_query = self.query({**params, "startIndex": None, "count": None}, urn)
            found += (await run_in_threadpool(lister, self.plane, kind_query))["Resources"]
        paged = self.query(params, USER_URN)
        start = paged.start_index - 1
        page = found[start : start + paged.count]
        return scim_response(
            {
                "schemas": [LIST_URN],
                "totalResults": len(found),
                "startIndex": paged.start_index,
                "itemsPerPage": len(page),
                "Resources": page,
            }
        )

    async def config(self, request: Request) -> Response:
        return scim_response(SERVICE_PROVIDER_CONFIG)

    async def resource_types(self, request: Request) -> Response:
        return scim_response(listed(list(RESOURCE_TYPES.values())))

    async def resource_type(self, request: Request) -> Response:
        return scim_response(
            described(RESOURCE_TYPES, request.path_params["name"], "resource type")
        )

    async def schemas(self, request: Request) -> Response:
        return scim_response(listed(list(SCHEMAS.values())))

    async def schema(self, request: Request) -> Response:
        return scim_response(described(SCHEMAS, request.path_params["urn"], "schema"))


def described(table: Mapping[str, Any], name: str, what: str) -> Any:
    found = table.get(name)
    if found is None:
        raise NotFound(f"no {what} {name!r}")
    return found


def search_params(body: Any) -> dict[str, Any]:
    """A SearchRequest body as the query parameters a listing reads."""
    if not isinstance(body, dict) or SEARCH_URN not in body.get("schemas", []):
        raise InvalidInput(f"a search is a {SEARCH_URN} object")
    params = {k: body.get(k) for k in ("filter", "startIndex", "count")}
    for key in ("attributes", "excludedAttributes"):
        if isinstance(body.get(key), list):
            params[key] = ",".join(str(v) for v in body[key])
    return params


def listed(items: list[Any]) -> dict[str, Any]:
    return {
        "schemas": [LIST_URN],
        "totalResults": len(items),
        "startIndex": 1,
        "itemsPerPage": len(items),
        "Resources": items,
    }


def build_scim(plane: ControlPlane) -> Starlette:
    scim = ScimApp(plane)

    async def not_found(request: Request, exc: Exception) -> Response:
        return error_response(NotFound(f"no SCIM resource at {request.url.path}"))

    async def not_allowed(request: Request, exc: Exception) -> Response:
        body = {"schemas": [ERROR_URN], "status": "405", "detail": "method not allowed here"}
        return scim_response(body, 405)

    return Starlette(routes=scim.routes(), exception_handlers={404: not_found, 405: not_allowed})


__all__ = ["build_scim", "is_scim_path"]
