"""What every management API request must be before a route sees it: a body must be JSON
(`application/json`, with or without parameters such as
`domain-model=launchdarkly.semanticpatch`, or `application/*+json`) nested no deeper than
`nesting.MAX_DOCUMENT_DEPTH`, and no text in the path, the query or the body may hold NUL
(PostgreSQL's text cannot, so it would fail in the store).
"""

from __future__ import annotations

from email.message import Message
from typing import Any
from urllib.parse import unquote_to_bytes

import orjson
from fastapi import Request

from flagstaff_server.errors import InvalidInput, NotFound, UnsupportedMediaType
from flagstaff_server.nesting import (
    MAX_DOCUMENT_DEPTH,
    is_text_too_deep,
    too_deep_message,
    where_too_deep,
)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# Members looked at to name the place of a body nested too deep; past it the body is named.
POINTER_BUDGET = 100_000


def is_json(content_type: str) -> bool:
    message = Message()
    message["content-type"] = content_type
    if message.get_content_maintype() != "application":
        return False
    subtype = message.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")


def has_body(request: Request) -> bool:
    length = request.headers.get("content-length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "transfer-encoding" in request.headers


async def screen_request(request: Request) -> None:
    """Raise `UnsupportedMediaType` for a request body that is not declared as JSON,
    `InvalidInput` for one nested too deep, and `NotFound`/`InvalidInput` for NUL in the path,
    the query or the body."""
    if "\x00" in request.scope["path"]:
        raise NotFound("no resource has NUL in its key")
    query: bytes = request.scope.get("query_string", b"")
    if b"%00" in query and b"\x00" in unquote_to_bytes(query):
        raise InvalidInput("a query parameter holds NUL (%00)")
    if request.method not in BODY_METHODS or not has_body(request):
        return
    content_type = request.headers.get("content-type")
    if content_type is None:
        raise UnsupportedMediaType("a request body needs 'Content-Type: application/json'")
    if not is_json(content_type):
        raise UnsupportedMediaType(
            f"expected a JSON body ('Content-Type: application/json'), got {content_type!r}"
        )
    raw = await request.body()
    refuse_deep_body(raw)
    refuse_nul_in_body(raw)


def refuse_deep_body(raw: bytes) -> None:
    """400 naming the place when a JSON body nests deeper than any document may (checked on the
    text, so nothing recursive ever walks such a body)."""
    if not is_text_too_deep(raw, MAX_DOCUMENT_DEPTH):
        return
    message = f"the body is {too_deep_message(MAX_DOCUMENT_DEPTH)}"
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # malformed, or past orjson's own limit of 1024 levels: no place to name
        raise InvalidInput(message, path="") from None
    raise InvalidInput(
        message, path=where_too_deep(document, MAX_DOCUMENT_DEPTH, budget=POINTER_BUDGET)
    )


def refuse_nul_in_body(raw: bytes) -> None:
    """400 naming the member when a JSON body's text holds NUL (JSON can only write it as the
    escape `\\u0000`, so bodies without that escape are not parsed here)."""
    if b"\\u0000" not in raw:
        return
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return  # the route reports malformed JSON as always
    path = nul_path(document, "")
    if path is not None:
        raise InvalidInput("text may not contain NUL (\\u0000)", path=path)


def nul_path(value: Any, path: str) -> str | None:
    """The JSON pointer of the first string (a member name or a value) holding NUL, else None."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for name, member in value.items():
            inner = f"{path}/{name.replace('~', '~0').replace('/', '~1')}"
            if "\x00" in name:
                return inner
            found = nul_path(member, inner)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = nul_path(item, f"{path}/{index}")
            if found is not None:
                return found
    return None
