"""`POST /webhook/triggers/{triggerId}/{secret}`: the unauthenticated URL an alerting tool calls to
fire a flag trigger (`services.flag_triggers.invoke_trigger`). Raw ASGI beside the management
API, so that any body (JSON or not, or none) is accepted as LaunchDarkly accepts it; errors are
problem JSON from the one table in `http.problem`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import orjson
from starlette.responses import Response

from flagstaff_server.asgi import Receive, Scope, Send
from flagstaff_server.errors import ContentTooLarge, FlagstaffError, NotFound
from flagstaff_server.http.problem import error_response, problem_response
from flagstaff_server.services import flag_triggers
from flagstaff_server.services.plane import ControlPlane

PREFIX = flag_triggers.TRIGGER_PATH + "/"
MAX_BODY_BYTES = 64 * 1024
"""An alert's payload; anything larger is refused unread (413)."""


def handles(path: str) -> bool:
    return path.startswith(PREFIX)


class TriggerEndpoint:
    def __init__(self, plane: Callable[[], ControlPlane | None]) -> None:
        self.plane = plane
        """The control plane; None while the server starts."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        response = await self.respond(scope, receive)
        await response(scope, receive, send)

    async def respond(self, scope: Scope, receive: Receive) -> Response:
        if scope["method"] != "POST":
            return problem_response(
                status=405,
                code="method_not_allowed",
                message="a flag trigger is called with POST",
                headers={"Allow": "POST"},
            )
        plane = self.plane()
        if plane is None:
            return problem_response(
                status=503, code="service_unavailable", message="Flagstaff is starting"
            )
        try:
            trigger_id, secret = parse_path(scope["path"])
            body = await read_body(receive)
            client = scope.get("client")
            result = await asyncio.to_thread(
                flag_triggers.invoke_trigger,
                plane,
                trigger_id,
                secret,
                body=body,
                client=client[0] if client else None,
            )
        except FlagstaffError as exc:
            return error_response(exc)
        return Response(orjson.dumps(result), media_type="application/json")


def parse_path(path: str) -> tuple[str, str]:
    parts = path[len(PREFIX) :].split("/")
    if len(parts) != 2 or not all(parts):
        raise NotFound("no such trigger")
    return parts[0], parts[1]


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ContentTooLarge(f"a trigger call's body is at most {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
