"""Request and response bodies of the flag, segment and import endpoints: JSON in (with clear 400
and 415 answers), JSON out, and the `If-Match` and semantic-patch media-type conventions.
"""

from __future__ import annotations

from email.message import Message
from typing import Any

import orjson
from fastapi import Request
from starlette.responses import Response

from flagstaff_server.errors import InvalidInput, MalformedJson, UnsupportedMediaType
from flagstaff_server.http.api.content import is_json

SEMANTIC_PATCH_MODEL = "launchdarkly.semanticpatch"


async def read_json(request: Request) -> Any:
    """The parsed JSON body; 415 unless it is declared JSON, 400 when absent or malformed."""
    content_type = request.headers.get("content-type")
    if content_type is None or not is_json(content_type):
        raise UnsupportedMediaType(
            f"expected 'Content-Type: application/json', got {content_type or 'none'!r}"
        )
    raw = await request.body()
    if not raw.strip():
        raise InvalidInput("a JSON request body is required", path="")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise MalformedJson(f"malformed JSON body: {exc}", path="") from exc


def is_semantic_patch(request: Request) -> bool:
    """Whether the body is declared `application/json; domain-model=launchdarkly.semanticpatch`."""
    content_type = request.headers.get("content-type")
    if content_type is None:
        return False
    message = Message()
    message["content-type"] = content_type
    model = message.get_param("domain-model")
    return isinstance(model, str) and model.strip().lower() == SEMANTIC_PATCH_MODEL


def expected_version(request: Request) -> int | None:
    """The version in an `If-Match` header (bare or as an entity tag), if any."""
    header = request.headers.get("if-match")
    if header is None or not header.strip():
        return None
    text = header.strip().removeprefix("W/").strip('"')
    if not text.isdigit():
        raise InvalidInput(f"If-Match must be a version number, got {header!r}", path="If-Match")
    return int(text)


def json_response(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")
