"""The event endpoints as one raw ASGI callable: server-side (`/bulk`, `/diagnostic`), browser
(`/events/...{envId}`, with CORS) and mobile (`/mobile...`). Handlers authenticate, bound and
check the body, and wait for the journal's fsync before answering 202; nothing else."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from typing import TYPE_CHECKING, Any

import orjson

from flagstaff_server.http.problem import problem_body
from flagstaff_server.ingest.body import BodyError, check_events, gunzip, read_body
from flagstaff_server.ingest.keyring import CredentialKind
from flagstaff_server.ingest.record import Kind

if TYPE_CHECKING:
    from flagstaff_server.ingest.node import IngestNode

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

ROUTES: dict[str, tuple[CredentialKind, Kind]] = {
    "/bulk": ("sdk", Kind.ANALYTICS),
    "/diagnostic": ("sdk", Kind.DIAGNOSTIC),
    "/mobile": ("mobile", Kind.ANALYTICS),
    "/mobile/events": ("mobile", Kind.ANALYTICS),
    "/mobile/events/bulk": ("mobile", Kind.ANALYTICS),
    "/mobile/events/diagnostic": ("mobile", Kind.DIAGNOSTIC),
}
BROWSER: dict[str, Kind] = {"/events/bulk/": Kind.ANALYTICS, "/events/diagnostic/": Kind.DIAGNOSTIC}
SCHEMAS = {b"4"}
CORS_ALLOW_HEADERS = (
    b"Cache-Control,Content-Type,Content-Length,Content-Encoding,Accept-Encoding,"
    b"X-LaunchDarkly-User-Agent,X-LaunchDarkly-Payload-ID,X-LaunchDarkly-Wrapper,"
    b"X-LaunchDarkly-Event-Schema,X-LaunchDarkly-Tags"
)


def handles(path: str) -> bool:
    return path in ROUTES or path.startswith(tuple(BROWSER))


def credential_of(header: bytes) -> str:
    """The key from an Authorization value: raw (what SDKs send), `api_key` or `Bearer`."""
    value = header.decode("latin-1").strip()
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() in ("api_key", "bearer"):
        return rest.strip()
    return value


class HttpDate:
    """The `Date` header value, formatted once per second."""

    def __init__(self) -> None:
        self._second = -1
        self._value = b""

    def now(self) -> bytes:
        second = int(time.time())
        if second != self._second:
            self._second = second
            self._value = formatdate(second, usegmt=True).encode()
        return self._value


class IngestApp:
    def __init__(self, node: IngestNode) -> None:
        self.node = node
        self.date = HttpDate()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        headers = dict(scope["headers"])
        cors: Headers = []
        if path in ROUTES:
            credential_kind, kind = ROUTES[path]
            credential = credential_of(headers.get(b"authorization", b""))
        else:
            prefix = next((p for p in BROWSER if path.startswith(p)), None)
            if prefix is None:
                await self._problem(send, 404, "not_found", f"no event endpoint at {path}", [])
                return
            credential_kind, kind = "client", BROWSER[prefix]
            credential = path[len(prefix) :]
            cors = cors_headers(headers)
            if scope["method"] == "OPTIONS":
                await self._respond(send, 200, [*cors, (b"access-control-max-age", b"300")])
                return
        if scope["method"] != "POST":
            await self._problem(send, 405, "method_not_allowed", "events are POSTed", cors)
            return
        await self._accept(scope, receive, send, headers, credential_kind, credential, kind, cors)

    async def _accept(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[bytes, bytes],
        credential_kind: CredentialKind,
        credential: str,
        kind: Kind,
        cors: Headers,
    ) -> None:
        node = self.node
        found = await node.keyring.find(credential_kind, credential)
        if found == "unknown":
            node.counts["unauthorized"] += 1
            await self._problem(send, 401, "unauthorized", f"unknown {credential_kind} key", cors)
            return
        if found == "unavailable":
            node.counts["credentials_unavailable"] += 1
            await self._busy(send, "credentials cannot be checked yet", cors)
            return
        project, environment = found
        schema = headers.get(b"x-launchdarkly-event-schema")
        if schema is not None and schema.strip() not in SCHEMAS:
            await self._problem(
                send,
                400,
                "invalid_request",
                f"X-LaunchDarkly-Event-Schema {schema.decode('latin-1')!r} is not supported (4)",
                cors,
            )
            return
        if node.over_budget():
            node.counts["over_budget"] += 1
            await self._busy(send, "the event backlog is over its disk budget", cors)
            return
        limit = node.config.max_body_bytes
        try:
            data = await read_body(receive, limit)
            if headers.get(b"content-encoding", b"").strip().lower() == b"gzip":
                data = gunzip(data, limit)
            check_events(data, diagnostic=kind == Kind.DIAGNOSTIC)
        except BodyError as exc:
            node.counts[f"rejected_{exc.status}"] += 1
            code = "payload_too_large" if exc.status == 413 else "invalid_request"
            await self._problem(send, exc.status, code, exc.message, cors)
            return
        given = headers.get(b"x-launchdarkly-payload-id", b"").decode("latin-1").strip()
        try:
            await node.accept(
                kind=kind,
                project=project,
                environment=environment,
                payload_id=given[:255] or None,
                payload=data,
            )
        except OSError:
            await self._busy(send, "the event log cannot be written", cors)
            return
        await self._respond(send, 202, cors)

    async def _busy(self, send: Send, message: str, cors: Headers) -> None:
        retry = str(self.node.config.retry_after_seconds).encode()
        await self._problem(
            send, 503, "service_unavailable", message, [*cors, (b"retry-after", retry)]
        )

    async def _respond(self, send: Send, status: int, extra: Headers) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"date", self.date.now()), (b"content-length", b"0"), *extra],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _problem(
        self, send: Send, status: int, code: str, message: str, extra: Headers
    ) -> None:
        body = orjson.dumps(problem_body(status=status, code=code, message=message, path=None))
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"date", self.date.now()),
                    (b"content-type", b"application/problem+json"),
                    (b"content-length", str(len(body)).encode()),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def cors_headers(headers: dict[bytes, bytes]) -> Headers:
    origin = headers.get(b"origin") or b"*"
    return [
        (b"access-control-allow-origin", origin),
        (b"access-control-allow-methods", b"POST, OPTIONS"),
        (b"access-control-allow-headers", CORS_ALLOW_HEADERS),
        (b"access-control-expose-headers", b"Date, ETag"),
        (b"access-control-allow-credentials", b"false"),
        (b"vary", b"Origin"),
    ]


def generated_id() -> str:
    """A payload id for a payload sent without one; never equal to an SDK's UUID."""
    return f"flagstaff-{uuid.uuid4().hex}"
