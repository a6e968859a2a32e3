"""The management API's request media types: a body must be JSON (`application/json`, with or
without parameters such as `domain-model=launchdarkly.semanticpatch`, or `application/*+json`).
"""

from __future__ import annotations

from email.message import Message

from fastapi import Request

from flagstaff_server.errors import UnsupportedMediaType

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


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


async def require_json_body(request: Request) -> None:
    """Raise `UnsupportedMediaType` for a request body that is not declared as JSON."""
    if request.method not in BODY_METHODS or not has_body(request):
        return
    content_type = request.headers.get("content-type")
    if content_type is None:
        raise UnsupportedMediaType("a request body needs 'Content-Type: application/json'")
    if not is_json(content_type):
        raise UnsupportedMediaType(
            f"expected a JSON body ('Content-Type: application/json'), got {content_type!r}"
        )
