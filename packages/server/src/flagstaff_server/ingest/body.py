"""An event request's body: reading it within a size limit, bounded gzip decompression (a zip
bomb hits the limit, never memory) and the JSON shape check. Pure apart from awaiting `receive`."""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class BodyError(Exception):
    """The body cannot be accepted; `status` is 400 or 413, `message` says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def read_body(receive: Receive, limit: int) -> bytes:
    """The request body as sent; 413 once it grows past `limit` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BodyError(400, "the client went away before sending the whole body")
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyError(413, f"the body is larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress a gzip body, producing at most `limit` bytes: 413 beyond that, 400 when the
    bytes are not gzip."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BodyError(400, f"the body is not valid gzip: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise BodyError(413, f"the decompressed body is larger than {limit} bytes")
    if not inflater.eof:
        raise BodyError(400, "the gzip body is truncated")
    return out


def check_events(data: bytes, *, diagnostic: bool) -> int:
    """Validate the JSON shape and return how many events it holds. Analytics bodies are an
    array of objects; a diagnostic body is one object (what SDKs send) or such an array."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BodyError(400, f"the body is not valid JSON: {exc}") from None
    if diagnostic and isinstance(parsed, dict):
        parsed = [parsed]
    if not isinstance(parsed, list):
        expected = "an object or an array" if diagnostic else "an array of event objects"
        raise BodyError(400, f"the body must be {expected}, got {type(parsed).__name__}")
    for index, event in enumerate(parsed):
        if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
            raise BodyError(400, f"event [{index}] must be an object with a string kind")
    return len(parsed)
