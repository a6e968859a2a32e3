"""The one table from `flagstaff_server.errors` to HTTP status codes and problem-JSON bodies.

Every error answer of the management API goes through `problem_response`; handlers never build
error bodies themselves. Bad input becomes a 4xx naming the field; only a bug reaches the 500 path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from flagstaff_server.errors import (
    AlreadyExists,
    ApprovalRequired,
    Conflict,
    ContentTooLarge,
    FlagstaffError,
    Forbidden,
    InvalidInput,
    NotFound,
    RegionReadOnly,
    StoreUnavailable,
    TooManyAttempts,
    Unauthorized,
    UnsupportedMediaType,
    UriTooLong,
    ValidationError,
    VersionConflict,
)

PROBLEM_MEDIA_TYPE = "application/problem+json"

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProblemKind:
    status: int
    title: str


# Looked up along the exception's MRO, so a subclass added to errors.py inherits its parent's row.
PROBLEMS: Mapping[type[FlagstaffError], ProblemKind] = {
    NotFound: ProblemKind(404, "Not found"),
    AlreadyExists: ProblemKind(409, "Already exists"),
    VersionConflict: ProblemKind(409, "Version conflict"),
    Conflict: ProblemKind(409, "Conflict"),
    ValidationError: ProblemKind(400, "Invalid data"),
    ContentTooLarge: ProblemKind(413, "Content too large"),
    UriTooLong: ProblemKind(414, "URI too long"),
    InvalidInput: ProblemKind(400, "Invalid request"),
    Unauthorized: ProblemKind(401, "Unauthorized"),
    Forbidden: ProblemKind(403, "Forbidden"),
    ApprovalRequired: ProblemKind(405, "Approval required"),
    TooManyAttempts: ProblemKind(429, "Too many attempts"),
    UnsupportedMediaType: ProblemKind(415, "Unsupported media type"),
    StoreUnavailable: ProblemKind(503, "Service unavailable"),
    RegionReadOnly: ProblemKind(503, "This region is read-only"),
    FlagstaffError: ProblemKind(500, "Internal error"),
}

# Codes for answers the framework produces without one of our exceptions.
STATUS_CODES: Mapping[int, str] = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "service_unavailable",
}


def kind_of(error: FlagstaffError) -> ProblemKind:
    for cls in type(error).__mro__:
        if cls in PROBLEMS:
            return PROBLEMS[cls]
    raise AssertionError("FlagstaffError is always in the table")


def problem_body(
    *, status: int, code: str, message: str, path: str | None, title: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "code": code,
        "message": message,
        "type": f"urn:flagstaff:problem:{code}",
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "detail": message,
    }
    if path is not None:
        body["path"] = path
    return body


def problem_response(
    *,
    status: int,
    code: str,
    message: str,
    path: str | None = None,
    title: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    body = problem_body(status=status, code=code, message=message, path=path, title=title)
    return Response(
        orjson.dumps(body), status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers
    )


def error_response(error: FlagstaffError) -> Response:
    kind = kind_of(error)
    headers: dict[str, str] | None = None
    if isinstance(error, Unauthorized):
        headers = {"WWW-Authenticate": "Bearer"}
    elif isinstance(error, StoreUnavailable):
        # a database blip, usually: clients may retry soon rather than give up
        headers = {"Retry-After": "1"}
    elif isinstance(error, RegionReadOnly | TooManyAttempts):
        headers = {"Retry-After": str(error.retry_after)}
    body = problem_body(
        status=kind.status,
        code=error.code,
        message=error.message,
        path=error.path,
        title=kind.title,
    )
    if isinstance(error, Forbidden) and error.action is not None:
        body["action"] = error.action
        body["resource"] = error.resource
    return Response(
        orjson.dumps(body), status_code=kind.status, media_type=PROBLEM_MEDIA_TYPE, headers=headers
    )


def json_pointer(parts: Sequence[str | int]) -> str:
    """RFC 6901 pointer for a location; `~` and `/` inside names are escaped as the RFC says."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def validation_response(exc: RequestValidationError) -> Response:
    """The first validation error, naming its field: a JSON pointer into the body, else the
    query/path/header parameter's name."""
    errors = exc.errors()
    if not errors:
        return problem_response(status=400, code="invalid_request", message="invalid request")
    first = errors[0]
    location = tuple(first.get("loc", ()))
    source, parts = (location[0], location[1:]) if location else ("body", ())
    kind = first.get("type", "")
    if kind == "json_invalid":
        detail = first.get("ctx", {}).get("error", "JSON decode error")
        return problem_response(
            status=400,
            code="invalid_json",
            message=f"malformed JSON body: {detail} at position {parts[0] if parts else 0}",
            path="",
        )
    message = str(first.get("msg", "invalid value"))
    if source == "body":
        path = json_pointer(parts)
        if kind == "missing" and not parts:
            message = "a JSON request body is required"
        else:
            message = f"{path or 'body'}: {message}"
    else:
        path = ".".join(str(part) for part in parts)
        message = f"{source} parameter {path}: {message}"
    more = len(errors) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return problem_response(status=400, code="invalid_request", message=message, path=path)


def http_exception_response(exc: StarletteHTTPException, request: Request) -> Response:
    status = exc.status_code
    if status == 404:
        message = f"no resource at {request.url.path}"
    elif status == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    code = STATUS_CODES.get(status, "error")
    return problem_response(
        status=status, code=code, message=message, headers=getattr(exc, "headers", None)
    )


def answer_error(request: Request, error: FlagstaffError) -> Response:
    """The answer to `error` raised while serving `request`; a 5xx is logged."""
    if kind_of(error).status >= 500:
        log.warning("%s %s failed: %s", request.method, request.url.path, error)
    return error_response(error)


def install(app: FastAPI) -> None:
    """Route every error raised inside `app` through the table above."""

    async def on_flagstaff_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, FlagstaffError)
        return answer_error(request, exc)

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return validation_response(exc)

    async def on_http_exception(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return http_exception_response(exc, request)

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return problem_response(status=500, code="internal_error", message="internal error")

    app.add_exception_handler(FlagstaffError, on_flagstaff_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_exception)
    app.add_exception_handler(Exception, on_unexpected)
