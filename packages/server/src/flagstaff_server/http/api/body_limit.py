"""The management API's request body limit, as ASGI middleware in front of everything else
(routing, tokens, parsing): a body over the limit is answered 413 as soon as that is known, from
`Content-Length` before reading anything, else while counting the chunks of a streamed body, and
the rest is never read. A streamed body within the limit is handed on whole; a declared one as
the server delivers it (never past its length), without a copy.
"""

from __future__ import annotations

import orjson

from flagstaff_server.asgi import ASGIApp, Message, Receive, Scope, Send
from flagstaff_server.http.problem import PROBLEM_MEDIA_TYPE, problem_body


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.limit = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope)
        if declared is not None and declared > self.limit:
            await self.refuse(send)
            return
        if declared is not None or not is_chunked(scope):
            # the server hands on no more than the declared length (none without either header)
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before sending its whole body
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self.refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replay(b"".join(chunks), receive), send)

    async def refuse(self, send: Send) -> None:
        body = orjson.dumps(
            problem_body(
                status=413,
                code="payload_too_large",
                message=f"the request body is larger than {self.limit} bytes",
                path="",
            )
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                    (b"content-length", b"%d" % len(body)),
                    # the unread rest of the body must not be taken for the next request
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server's parser refuses these; count the body instead
    return None


def is_chunked(scope: Scope) -> bool:
    return any(name == b"transfer-encoding" for name, _ in scope["headers"])


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the whole body in one message, then defers to the real one (for
    the disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed
