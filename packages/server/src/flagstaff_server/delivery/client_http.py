"""The HTTP plumbing of client-side delivery: reading a bounded body, headers and query values,
matching ETags, and writing JSON and problem-JSON answers (with the caller's CORS headers).
No routing, no credentials, no evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import orjson

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.context_limits import CONTEXT_LIMITS
from flagstaff_server.errors import (
    ContentTooLarge,
    FlagstaffError,
    Forbidden,
    InvalidInput,
    NotFound,
    StoreUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    UriTooLong,
)

JSON = b"application/json"
CONTEXT_LIMIT = CONTEXT_LIMITS.max_bytes
"""Largest context body (REPORT, OFREP) accepted (`flagstaff_server.context_limits`)."""

STATUS = {
    ContentTooLarge: 413,
    UriTooLong: 414,
    InvalidInput: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    UnsupportedMediaType: 415,
    StoreUnavailable: 503,
}


def problem(
    exc: FlagstaffError, cors: Headers, *, retry_after: Callable[[], int]
) -> tuple[int, Headers, bytes]:
    """The problem-JSON answer to `exc`: status, headers (CORS, `Retry-After` on 503, asked of
    `retry_after` only then), body."""
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 500)
    headers = list(cors)
    if status == 503:
        headers.append((b"retry-after", b"%d" % retry_after()))
    body: dict[str, Any] = {"code": exc.code, "message": exc.message, "status": status}
    if exc.path:
        body["path"] = exc.path
    headers.append((b"content-type", b"application/problem+json"))
    return status, headers, orjson.dumps(body)


def check_json(scope: Scope) -> None:
    content_type = header(scope, b"content-type").split(b";")[0].strip().lower()
    if content_type != JSON:
        raise UnsupportedMediaType("REPORT bodies must be application/json contexts")


async def read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise InvalidInput("the client went away before sending its body")
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ContentTooLarge(f"the body is larger than {limit} bytes", path="body")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def query_value(scope: Scope, name: str) -> str | None:
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return None
    values = parse_qs(raw.decode("latin-1")).get(name)
    return values[0] if values else None


def header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return b""


def etag_matches(if_none_match: bytes, etag: bytes) -> bool:
    if not if_none_match:
        return False
    return any(tag.strip().removeprefix(b"W/") == etag for tag in if_none_match.split(b","))


async def respond(send: Send, status: int, body: bytes, headers: Headers) -> None:
    if status != 304:
        headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def respond_json(send: Send, status: int, body: Any, cors: Headers) -> None:
    await respond(send, status, orjson.dumps(body), [(b"content-type", JSON), *cors])
