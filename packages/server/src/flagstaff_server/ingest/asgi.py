"""The event endpoints: server-side (`/bulk`, `/diagnostic`), browser (`/events/...{envId}`, with
CORS) and mobile (`/mobile...`). Each request is routed, authenticated, its body bounded and
checked, and answered 202 once the journal's fsync is done; nothing else. The steps are shared by
the raw ASGI callable and the connection protocol that serves most POSTs without a task."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from email.utils import formatdate
from typing import Protocol

import orjson

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.delivery.asgi import sdk_key_of
from flagstaff_server.http.problem import problem_body
from flagstaff_server.ingest.body import BodyError, check_events, gunzip, read_body
from flagstaff_server.ingest.config import IngestConfig
from flagstaff_server.ingest.keyring import CredentialKind, Found, Keyring
from flagstaff_server.ingest.record import Kind

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


@dataclass(frozen=True, slots=True)
class Answer:
    """A complete response: status, headers (besides Date) and body."""

    status: int
    headers: Headers
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Target:
    """What an event request is for: whose credential, which payload kind, CORS headers."""

    credential_kind: CredentialKind
    credential: str
    kind: Kind
    cors: Headers


def target_of(method: str, path: str, headers: dict[bytes, bytes]) -> Target | Answer:
    """Route an event request; an Answer for a preflight, a wrong method or an unknown path."""
    cors: Headers = []
    if path in ROUTES:
        credential_kind, kind = ROUTES[path]
        credential = sdk_key_of(headers.get(b"authorization", b""))
    else:
        prefix = next((p for p in BROWSER if path.startswith(p)), None)
        if prefix is None:
            return problem(404, "not_found", f"no event endpoint at {path}", [])
        credential_kind, kind = "client", BROWSER[prefix]
        credential = path[len(prefix) :]
        cors = cors_headers(headers)
        if method == "OPTIONS":
            return Answer(200, [*cors, (b"access-control-max-age", b"300")])
    if method != "POST":
        return problem(405, "method_not_allowed", "events are POSTed", cors)
    return Target(credential_kind, credential, kind, cors)


def problem(
    status: int, code: str, message: str, extra: Headers, field: str | None = None
) -> Answer:
    body = orjson.dumps(problem_body(status=status, code=code, message=message, path=field))
    return Answer(status, [(b"content-type", b"application/problem+json"), *extra], body)


class Intake(Protocol):
    """The node as the endpoints use it: `node.IngestNode` is one (this module must not import
    the node, which builds the app)."""

    config: IngestConfig
    keyring: Keyring
    counts: Counter[str]

    def over_budget(self) -> bool: ...

    def submit(
        self,
        *,
        kind: Kind,
        project: str,
        environment: str,
        payload_id: str | None,
        payload: bytes,
    ) -> asyncio.Future[object] | None:
        """None for a repeat already acknowledged, else a future done once it is durable."""


class IngestApp:
    """The endpoints' steps, shared by the ASGI callable (any request) and the connection
    protocol (`ingest/connection.py`: POSTs of known credentials with small bodies)."""

    def __init__(self, node: Intake) -> None:
        self.node = node
        self.date = HttpDate()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        target = target_of(scope["method"], scope["path"], headers)
        if isinstance(target, Answer):
            await self.send(send, target)
            return
        node = self.node
        found = await node.keyring.find(target.credential_kind, target.credential)
        if found == "unknown":
            node.counts["unauthorized"] += 1
            message = f"unknown {target.credential_kind} key"
            await self.send(send, problem(401, "unauthorized", message, target.cors))
            return
        if found == "unavailable":
            node.counts["credentials_unavailable"] += 1
            await self.send(send, self.busy("credentials cannot be checked yet", target.cors))
            return
        refused = self.refusal(target, headers)
        if refused is not None:
            await self.send(send, refused)
            return
        try:
            data = await read_body(receive, node.config.max_body_bytes)
        except BodyError as exc:
            await self.send(send, self.rejected(exc, target))
            return
        durable = self.submit(target, found, headers, data)
        if isinstance(durable, Answer):
            await self.send(send, durable)
            return
        if durable is not None:
            try:
                await durable
            except OSError:
                await self.send(send, self.unwritable(target))
                return
        await self.send(send, self.accepted(target))

    def refusal(self, target: Target, headers: dict[bytes, bytes]) -> Answer | None:
        """The answer for a request refused before its body is read: an unsupported schema,
        or a backlog over the disk budget."""
        schema = headers.get(b"x-launchdarkly-event-schema")
        if schema is not None and schema.strip() not in SCHEMAS:
            message = (
                f"X-LaunchDarkly-Event-Schema {schema.decode('latin-1')!r} is not supported (4)"
            )
            return problem(400, "invalid_request", message, target.cors)
        if self.node.over_budget():
            self.node.counts["over_budget"] += 1
            return self.busy("the event backlog is over its disk budget", target.cors)
        return None

    def submit(
        self, target: Target, found: Found, headers: dict[bytes, bytes], data: bytes
    ) -> Answer | asyncio.Future[object] | None:
        """Check the body and start its append: an Answer when it is refused, None when it is a
        repeat already acknowledged, else a future that completes once it is durable."""
        limit = self.node.config.max_body_bytes
        try:
            if headers.get(b"content-encoding", b"").strip().lower() == b"gzip":
                data = gunzip(data, limit)
            check_events(data, diagnostic=target.kind == Kind.DIAGNOSTIC)
        except BodyError as exc:
            return self.rejected(exc, target)
        given = headers.get(b"x-launchdarkly-payload-id", b"").decode("latin-1").strip()
        project, environment = found
        return self.node.submit(
            kind=target.kind,
            project=project,
            environment=environment,
            payload_id=given[:255] or None,
            payload=data,
        )

    def accepted(self, target: Target) -> Answer:
        return Answer(202, target.cors)

    def unwritable(self, target: Target) -> Answer:
        return self.busy("the event log cannot be written", target.cors)

    def rejected(self, error: BodyError, target: Target) -> Answer:
        self.node.counts[f"rejected_{error.status}"] += 1
        code = "payload_too_large" if error.status == 413 else "invalid_request"
        return problem(error.status, code, error.message, target.cors, error.field)

    def busy(self, message: str, cors: Headers) -> Answer:
        retry = str(self.node.config.retry_after_seconds).encode()
        return problem(503, "service_unavailable", message, [*cors, (b"retry-after", retry)])

    async def send(self, send: Send, answer: Answer) -> None:
        await send_answer(send, answer, self.date.now())


async def send_answer(send: Send, answer: Answer, date: bytes) -> None:
    """Send a whole Answer through ASGI, with its Date and Content-Length."""
    length = b"%d" % len(answer.body)
    headers = [(b"date", date), (b"content-length", length), *answer.headers]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


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
