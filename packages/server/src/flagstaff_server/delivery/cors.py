"""CORS for the endpoints browsers call (client-side evaluation, goals, events, OFREP): the
headers every response carries (304s and streams included) and the preflight answer.

Any origin may call: these endpoints are keyed by non-secret client-side ids (or by keys a server
holds), never by cookies, so credentials are not allowed. Pure apart from the ASGI wrapper.
"""

from __future__ import annotations

from flagstaff_server.asgi import ASGIApp, Headers, Message, Receive, Scope, Send
from flagstaff_server.delivery.answer import Answer, Head

ALLOW_METHODS = b"GET, POST, REPORT, OPTIONS"
ALLOW_HEADERS = (
    b"Accept, Accept-Encoding, Authorization, Cache-Control, Content-Type, Content-Length, "
    b"If-None-Match, X-API-Key, X-LaunchDarkly-Event-Schema, X-LaunchDarkly-Payload-ID, "
    b"X-LaunchDarkly-Tags, X-LaunchDarkly-User-Agent, X-LaunchDarkly-Wrapper"
)
"""The LaunchDarkly browser SDK's custom headers (a missing one fails its preflight), OFREP's
`Authorization`/`X-API-Key`, and `If-None-Match` for conditional polls."""
EXPOSE_HEADERS = b"ETag, Date, Retry-After"
"""Without ETag exposed the OFREP web provider never sends If-None-Match; LD reads Date; the OFREP
web provider waits out a 429's Retry-After only if it can read it."""
MAX_AGE = b"300"


def origin_of(scope: Scope) -> bytes:
    for name, value in scope["headers"]:
        if name == b"origin":
            return bytes(value)
    return b""


def cors_headers(origin: bytes) -> Headers:
    """Headers for an actual response; none without an Origin (not a cross-origin request)."""
    if not origin:
        return []
    return [
        (b"access-control-allow-origin", origin),
        (b"access-control-allow-credentials", b"false"),
        (b"access-control-expose-headers", EXPOSE_HEADERS),
        (b"vary", b"Origin"),
    ]


def preflight_headers(origin: bytes) -> Headers:
    return [
        (b"access-control-allow-origin", origin or b"*"),
        (b"access-control-allow-methods", ALLOW_METHODS),
        (b"access-control-allow-headers", ALLOW_HEADERS),
        (b"access-control-expose-headers", EXPOSE_HEADERS),
        (b"access-control-max-age", MAX_AGE),
        (b"vary", b"Origin"),
    ]


def preflight_answer(origin: bytes) -> Answer:
    """The preflight's whole answer (the connection writes it, adding `content-length: 0`)."""
    return Answer(204, Head.of(preflight_headers(origin)), b"")


async def answer_preflight(scope: Scope, send: Send) -> None:
    headers = [*preflight_headers(origin_of(scope)), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def with_cors(app: ASGIApp) -> ASGIApp:
    """`app` with CORS: preflights answered here, the headers added to every response it sends
    (for apps that do not add them themselves, e.g. event ingestion)."""

    async def cors_app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            await answer_preflight(scope, send)
            return
        extra = cors_headers(origin_of(scope))
        if not extra:
            await app(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await app(scope, receive, send_with_cors)

    return cors_app
