"""The relay's event endpoints as one raw ASGI callable: server (`/bulk`, `/diagnostic`), mobile
(`/mobile...`) and browser (`/events/.../{envId}`, with CORS). A payload is answered 202 only
once it is in the durable spool; a full spool or a failed write is a 503 + Retry-After.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.delivery.asgi import sdk_key_of
from flagstaff_server.delivery.store import SnapshotStore
from flagstaff_server.ingest.asgi import Answer, HttpDate, cors_headers, problem, send_answer
from flagstaff_server.ingest.body import BodyError, check_events, gunzip, read_body
from flagstaff_server.relay.config import EventsConfig
from flagstaff_server.relay.spool import EventSpool

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
        self.date = HttpDate()
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
            cors = cors_headers(headers)
            if scope["method"] == "OPTIONS":
                await self._send(send, Answer(200, [*cors, (b"access-control-max-age", b"300")]))
                return
        if scope["method"] != "POST":
            await self._send(send, problem(405, "method_not_allowed", "events are POSTed", cors))
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
            message = f"unknown {kind} credential"
            await self._send(send, problem(401, "unauthorized", message, cors))
            return
        try:
            payload = await read_body(receive, self.config.max_body_bytes)
            if headers.get(b"content-encoding", b"").strip().lower() == b"gzip":
                payload = gunzip(payload, self.config.max_body_bytes)
            check_events(payload, diagnostic=route.endswith("diagnostic"))
        except BodyError as exc:
            self.counts[f"rejected_{exc.status}"] += 1
            code = "payload_too_large" if exc.status == 413 else "invalid_request"
            await self._send(send, problem(exc.status, code, exc.message, cors, exc.field))
            return
        if self.spool is None:
            # forwarding is off: accepted and dropped on purpose, and counted
            self.counts["discarded"] += 1
            await self._send(send, Answer(202, cors))
            return
        if self.spool.bytes > self.config.max_spool_bytes:
            self.counts["over_budget"] += 1
            await self._send(send, _busy("the event spool is full; retry later", cors))
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
            await self._send(send, _busy("the event spool cannot be written", cors))
            return
        self.counts["accepted"] += 1
        await self._send(send, Answer(202, cors))

    async def _send(self, send: Send, answer: Answer) -> None:
        await send_answer(send, answer, self.date.now())


def _busy(message: str, cors: Headers) -> Answer:
    return problem(503, "service_unavailable", message, [*cors, (b"retry-after", RETRY_AFTER)])
