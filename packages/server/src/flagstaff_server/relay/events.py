"""The relay's event endpoints as one raw ASGI callable: server (`/bulk`, `/diagnostic`), mobile
(`/mobile...`) and browser (`/events/.../{envId}`, with CORS). A payload is answered 202 only
once it is in the durable spool; a full spool or a failed write is a 503 + Retry-After.
"""

from __future__ import annotations

import time
import uuid
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from typing import Any

import orjson

from flagstaff_server.delivery.asgi import sdk_key_of
from flagstaff_server.delivery.store import SnapshotStore
from flagstaff_server.relay.config import EventsConfig
from flagstaff_server.relay.spool import EventSpool

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

SERVER_ROUTES = {
    "/bulk": ("sdk", "bulk"),
    "/diagnostic": ("sdk", "diagnostic"),
    "/mobile": ("mobile", "mobile"),
    "/mobile/events": ("mobile", "mobile"),
    "/mobile/events/bulk": ("mobile", "mobile"),
    "/mobile/events/diagnostic": ("mobile", "mobile-diagnostic"),
}
BROWSER_ROUTES = {"/events/bulk/": "browser", "/events/diagnostic/": "browser-diagnostic"}
PASSED_HEADERS = (b"user-agent", b"x-launchdarkly-wrapper", b"x-launchdarkly-tags")
RETRY_AFTER = b"5"


def handles(path: str) -> bool:
    return path in SERVER_ROUTES or path.startswith(tuple(BROWSER_ROUTES))


class BodyError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class EventsApp:
    def __init__(
        self,
        store: SnapshotStore,
        names: dict[tuple[str, str], str],
        spool: EventSpool | None,
        config: EventsConfig,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.names = names
        """Relay environment name by (project, environment) id."""
        self.spool = spool
        self.config = config
        self.wall = wall
        self.counts: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        headers = dict(scope["headers"])
        cors: Headers = []
        if path in SERVER_ROUTES:
            kind, route = SERVER_ROUTES[path]
            credential = sdk_key_of(headers.get(b"authorization", b""))
        else:
            prefix = next(p for p in BROWSER_ROUTES if path.startswith(p))
            kind, route = "client-side", BROWSER_ROUTES[prefix]
            credential = path[len(prefix) :]
            cors = _cors(headers)
            if scope["method"] == "OPTIONS":
                await _respond(send, 200, [*cors, (b"access-control-max-age", b"300")])
                return
        if scope["method"] != "POST":
            await _problem(send, 405, "method_not_allowed", "events are POSTed", cors)
            return
        now = self.wall()
        if kind == "sdk":
            env = self.store.find(credential, now)
        elif kind == "mobile":
            env = self.store.find_mobile(credential, now)
        else:
            env = self.store.find_client_side(credential)
        name = None if env is None else self.names.get((env.project, env.key))
        if name is None:
            self.counts["unauthorized"] += 1
            await _problem(send, 401, "unauthorized", f"unknown {kind} credential", cors)
            return
        try:
            payload = await _read_body(receive, self.config.max_body_bytes)
            if headers.get(b"content-encoding", b"").strip().lower() == b"gzip":
                payload = _gunzip(payload, self.config.max_body_bytes)
            _check(payload, diagnostic=route.endswith("diagnostic"))
        except BodyError as exc:
            self.counts[f"rejected_{exc.status}"] += 1
            await _problem(send, exc.status, "invalid_request", exc.message, cors)
            return
        if self.spool is None:
            # forwarding is off: accepted and dropped on purpose, and counted
            self.counts["discarded"] += 1
            await _respond(send, 202, cors)
            return
        if self.spool.bytes > self.config.max_spool_bytes:
            self.counts["over_budget"] += 1
            await _busy(send, "the event spool is full; retry later", cors)
            return
        given = headers.get(b"x-launchdarkly-payload-id", b"").decode("latin-1").strip()
        passed = {
            key.decode("latin-1"): value.decode("latin-1")
            for key, value in headers.items()
            if key in PASSED_HEADERS
        }
        try:
            await self.spool.append(
                route=route,
                environment=name,
                payload_id=given[:255] or f"relay-{uuid.uuid4()}",
                received_ms=int(now * 1000),
                headers=passed,
                payload=payload,
            )
        except OSError:
            self.counts["spool_error"] += 1
            await _busy(send, "the event spool cannot be written", cors)
            return
        self.counts["accepted"] += 1
        await _respond(send, 202, cors)


async def _read_body(receive: Receive, limit: int) -> bytes:
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


def _gunzip(data: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BodyError(400, f"Content-Encoding gzip, but the body is not gzip: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise BodyError(413, f"the decompressed body is larger than {limit} bytes")
    return out


def _check(payload: bytes, *, diagnostic: bool) -> None:
    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise BodyError(400, f"the body is not JSON: {exc}") from exc
    if diagnostic:
        if not isinstance(value, dict | list):
            raise BodyError(400, "a diagnostic event must be a JSON object")
    elif not isinstance(value, list):
        raise BodyError(400, "the body must be a JSON array of events")


def _cors(headers: dict[bytes, bytes]) -> Headers:
    return [
        (b"access-control-allow-origin", headers.get(b"origin") or b"*"),
        (b"access-control-allow-methods", b"POST, OPTIONS"),
        (
            b"access-control-allow-headers",
            b"Content-Type, Content-Encoding, X-LaunchDarkly-User-Agent, "
            b"X-LaunchDarkly-Payload-ID, X-LaunchDarkly-Wrapper, X-LaunchDarkly-Event-Schema, "
            b"X-LaunchDarkly-Tags",
        ),
        (b"vary", b"Origin"),
    ]


async def _respond(send: Send, status: int, extra: Headers, body: bytes = b"") -> None:
    date = formatdate(time.time(), usegmt=True).encode()
    headers = [(b"date", date), (b"content-length", b"%d" % len(body)), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _problem(send: Send, status: int, code: str, message: str, extra: Headers) -> None:
    body = orjson.dumps({"code": code, "message": message, "status": status})
    await _respond(send, status, [(b"content-type", b"application/problem+json"), *extra], body)


async def _busy(send: Send, message: str, extra: Headers) -> None:
    await _problem(
        send, 503, "service_unavailable", message, [*extra, (b"retry-after", RETRY_AFTER)]
    )
