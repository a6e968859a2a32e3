"""Headers every management API answer carries, as ASGI middleware outermost around the API app
(so the body limit's 413 gets them too): `X-Content-Type-Options: nosniff`, and `Cache-Control:
no-store` unless the route chose its own caching (the versioned Swagger UI files). Answers hold
secrets (a token's creation returns it, environments their SDK keys) that no cache may keep.
"""

from __future__ import annotations

from flagstaff_server.asgi import ASGIApp, Message, Receive, Scope, Send

DEFAULTS: tuple[tuple[bytes, bytes], ...] = (
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
)


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend(header for header in DEFAULTS if header[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
