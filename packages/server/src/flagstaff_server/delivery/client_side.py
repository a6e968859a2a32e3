"""Client-side delivery as one raw ASGI callable: LaunchDarkly browser, mobile and SDK-key
evaluation (`evalx` polls, `eval`/`meval`/`ping` streams), goals, and OFREP v1 (single and bulk
evaluation, change notifications over SSE), all with CORS and ETags. Browser events belong to
`flagstaff_server.ingest`. Handlers evaluate with the core on the environment's current snapshot
(compiled once per snapshot) and never touch the database. Fresh evaluations and stream opens go
through the node's admission control; cache hits and 304s do not.

Streams are also served on the connection itself (`open_direct`, called by
`connection.DeliveryHttpProtocol`): the same admission, headers and events without an ASGI task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, Protocol
from urllib.parse import parse_qs

import orjson
from flagstaff_core import Availability, Stopped, evaluate

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.context_limits import CONTEXT_LIMITS, check_size
from flagstaff_server.delivery import client_metrics, ofrep, sse
from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.asgi import SSE_HEADERS, sdk_key_of, send_stream
from flagstaff_server.delivery.client_context import (
    ClientContext,
    check_secure_mode,
    decode_base64_json,
    parse_json,
    read_context,
)
from flagstaff_server.delivery.client_stream import (
    PING,
    ClientStream,
    ReevaluationConfig,
    Reevaluator,
    StreamKind,
    is_visible,
    ofrep_view,
    refetch_message,
)
from flagstaff_server.delivery.cors import answer_preflight, cors_headers, origin_of
from flagstaff_server.delivery.evaluation_cache import (
    Evaluated,
    EvaluationCache,
    etag_of,
    view_name,
)
from flagstaff_server.delivery.fanout import (
    DIRECT_FRAMING,
    WRITE_BUFFER_LIMIT,
    Channel,
    DirectStream,
    Stream,
    Transport,
    response_head,
)
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.delivery.store import Environment, EnvironmentId
from flagstaff_server.errors import (
    ContentTooLarge,
    FlagstaffError,
    Forbidden,
    InvalidInput,
    NotFound,
    StoreUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    UriTooLong,
)

log = logging.getLogger(__name__)

JSON = b"application/json"
CONTEXT_LIMIT = CONTEXT_LIMITS.max_bytes
"""Largest context body (REPORT, OFREP) accepted (`flagstaff_server.context_limits`)."""
NO_GOALS_ETAG = b'"no-goals"'
"""Goals (click/page-view experiments) are not supported: always the same empty list."""
OFREP_INACTIVITY_SECONDS = 120
"""Providers may close the OFREP SSE stream after this long hidden (ADR-0008's default)."""

PREFIXES = (
    "/sdk/evalx/",
    "/sdk/goals/",
    "/eval/",
    "/ping/",
    "/msdk/",
    "/meval",
    "/mping",
    "/ofrep/",
)
STATUS = {
    ContentTooLarge: 413,
    UriTooLong: 414,
    InvalidInput: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    UnsupportedMediaType: 415,
    StoreUnavailable: 503,
}

Credential = Literal["client-side", "mobile", "sdk"]
VIEW: dict[Credential, Availability] = {
    "client-side": Availability.CLIENT_SIDE,
    "mobile": Availability.MOBILE,
    "sdk": Availability.ALL,
}


STREAM_ROUTES = frozenset({"stream", "ping", "ofrep_sse"})
"""Routes whose answer is a stream, which may be served on the connection itself."""


def handles(path: str) -> bool:
    """Whether `path` belongs to client-side delivery (for the composition root's dispatch)."""
    return path.startswith(PREFIXES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """A parsed request path. `context` is the base64url segment of GET forms; None means the
    context comes in the body (REPORT)."""

    name: Literal[
        "evalx", "stream", "ping", "goals", "events", "ofrep_flag", "ofrep_bulk", "ofrep_sse"
    ]
    credential: Credential
    env_id: str = ""
    """The client-side id from the path (browser routes) or the OFREP SSE path."""
    context: str | None = None
    flag_key: str = ""


def route_of(method: str, path: str) -> Route | None:
    """The route for `method` and `path`, or None (404)."""
    parts = path.strip("/").split("/")
    head, n = parts[0], len(parts)
    get, report, post = method == "GET", method == "REPORT", method == "POST"
    if head == "sdk" and n >= 3 and parts[1] == "evalx":
        if parts[2] in ("contexts", "users") and n >= 4 and get:
            return Route(name="evalx", credential="sdk", context=_segment(parts[3:]))
        if parts[2] in ("context", "user") and n == 3 and report:
            return Route(name="evalx", credential="sdk")
        if n >= 5 and parts[3] in ("contexts", "users") and get:
            return Route(
                name="evalx", credential="client-side", env_id=parts[2], context=_segment(parts[4:])
            )
        if n == 4 and parts[3] in ("context", "user") and report:
            return Route(name="evalx", credential="client-side", env_id=parts[2])
        return None
    if head == "sdk" and n == 3 and parts[1] == "goals" and get:
        return Route(name="goals", credential="client-side", env_id=parts[2])
    if head == "msdk" and n >= 3 and parts[1] == "evalx":
        if parts[2] in ("contexts", "users") and n >= 4 and get:
            return Route(name="evalx", credential="mobile", context=_segment(parts[3:]))
        if parts[2] in ("context", "user") and n == 3 and report:
            return Route(name="evalx", credential="mobile")
        return None
    if head == "eval" and n >= 3 and get:
        return Route(
            name="stream", credential="client-side", env_id=parts[1], context=_segment(parts[2:])
        )
    if head == "eval" and n == 2 and report:
        return Route(name="stream", credential="client-side", env_id=parts[1])
    if head == "meval" and n >= 2 and get:
        return Route(name="stream", credential="mobile", context=_segment(parts[1:]))
    if head == "meval" and n == 1 and report:
        return Route(name="stream", credential="mobile")
    if head == "ping" and n == 2 and get:
        return Route(name="ping", credential="client-side", env_id=parts[1])
    if head == "mping" and n == 1 and get:
        return Route(name="ping", credential="mobile")
    if head == "ofrep" and n >= 4 and parts[1] == "v1":
        if parts[2:4] == ["evaluate", "flags"] and post:
            if n == 4:
                return Route(name="ofrep_bulk", credential="sdk")
            if n == 5 and parts[4]:
                return Route(name="ofrep_flag", credential="sdk", flag_key=parts[4])
        if parts[2] == "sse" and n == 4 and get:
            return Route(name="ofrep_sse", credential="client-side", env_id=parts[3])
    return None


def stream_route(method: str, path: str) -> Route | None:
    """The route of a client stream request (`eval`/`meval` GET or REPORT, ping, OFREP SSE), or
    None for every other request. A REPORT route has no `context`: its body holds it."""
    route = route_of(method, path)
    return route if route is not None and route.name in STREAM_ROUTES else None


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamRequest:
    """A client stream request, authenticated and parsed: everything opening it needs."""

    env: Environment
    kind: StreamKind
    client: ClientContext | None
    availability: Availability
    with_reasons: bool = False
    fingerprint: bytes = b""
    cors: Headers


def _segment(parts: list[str]) -> str:
    # A standard-alphabet base64 context may contain "/", which splits the path: rejoin it, and
    # read either alphabet.
    return "/".join(parts).replace("+", "-").replace("/", "_")


class ClientServingNode(ServingNode, Protocol):
    """A node client-side delivery registers with: the connection protocol finds it there."""

    client_side: ClientDelivery | None


class ClientDelivery:
    """Client-side delivery for one delivery node."""

    def __init__(
        self,
        node: ClientServingNode,
        *,
        cache: EvaluationCache | None = None,
        reevaluation: ReevaluationConfig | None = None,
    ) -> None:
        self.node = node
        self.cache = cache or EvaluationCache()
        config = reevaluation or ReevaluationConfig(heartbeat_seconds=node.config.heartbeat_seconds)
        self.reevaluator = Reevaluator(self._environment_by_id, self.cache, config, rng=node.rng)
        self._worker: asyncio.Task[None] | None = None
        node.metric_sources.append(
            lambda: client_metrics.render(
                admission_counts=node.admission.counts,
                reevaluator=self.reevaluator,
                cache=self.cache,
            )
        )
        node.client_side = self  # the connection protocol finds it here to serve streams itself

    def _environment_by_id(self, env_id: tuple[str, str]) -> Environment | None:
        return self.node.store.get(*env_id)

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self.reevaluator.run(), name="client-reevaluation")

    async def stop(self) -> None:
        self.reevaluator.close_all("shutdown")
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None

    # dispatch ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method: str = scope["method"]
        if method == "OPTIONS":
            await answer_preflight(scope, send)
            return
        cors = cors_headers(origin_of(scope))
        route = route_of(method, scope["path"])
        try:
            if route is None:
                raise NotFound(f"no client-side endpoint for {method} {scope['path']}")
            await self._dispatch(route, scope, receive, send, cors)
        except FlagstaffError as exc:
            await self._error(send, exc, cors)

    async def _dispatch(
        self, route: Route, scope: Scope, receive: Receive, send: Send, cors: Headers
    ) -> None:
        if route.name.startswith("ofrep"):
            await self._ofrep(route, scope, receive, send, cors)
            return
        env = await self._authenticate(route, scope)
        if route.name == "goals":
            headers = [(b"etag", NO_GOALS_ETAG), (b"cache-control", b"no-cache"), *cors]
            if _matches(_header(scope, b"if-none-match"), NO_GOALS_ETAG):
                await _respond(send, 304, b"", headers)
                return
            await _respond(send, 200, b"[]", [(b"content-type", JSON), *headers])
            return
        if route.name in STREAM_ROUTES:
            body = b""
            if route.name == "stream" and route.context is None:
                _check_json(scope)  # before reading: a body of another type is never read
                body = await _read_body(receive, CONTEXT_LIMIT)
            await self._stream(self._stream_request(route, env, scope, body), receive, send)
            return
        client = await self._client_context(route, scope, receive)
        if route.credential == "client-side":
            self._check_secure_mode(env, client, scope)
        with_reasons = query_value(scope, "withReasons") == "true"
        await self._evalx(env, client, VIEW[route.credential], with_reasons, scope, send, cors)

    # authentication ----------------------------------------------------------------------------

    async def _authenticate(self, route: Route, scope: Scope) -> Environment:
        lookup, unknown = self._lookup(route, scope)
        return await self._find(lookup, unknown)

    def _lookup(
        self, route: Route, scope: Scope
    ) -> tuple[Callable[[], Environment | None], FlagstaffError]:
        """How to find the route's environment, and the error for a credential truly unknown."""
        if route.credential == "client-side":
            client_side_id = route.env_id
            return (
                lambda: self.node.store.find_client_side(client_side_id),
                NotFound(f"unknown environment id {client_side_id!r}", path="envId"),
            )
        header = _header(scope, b"authorization")
        key = sdk_key_of(header) if header else ""
        if not key:
            raise Unauthorized(f"an {route.credential} key is required in Authorization")
        if route.credential == "mobile":
            return (
                lambda: self.node.store.find_mobile(key, self.node.wall()),
                Unauthorized("unknown mobile key"),
            )
        return (
            lambda: self.node.store.find(key, self.node.wall()),
            Unauthorized("unknown SDK key"),
        )

    async def _find(
        self, lookup: Callable[[], Environment | None], unknown: FlagstaffError
    ) -> Environment:
        """As the server-side endpoints do: an unknown credential is answered as unknown only
        when a feed check that started after the request confirms it; otherwise 503."""
        node = self.node
        env = lookup()
        if env is None and node.current:
            known = await node.probe()
            env = lookup()
            if env is None and known:
                raise unknown
        if env is None or not node.serves(env):
            raise StoreUnavailable("this delivery node has no data for that environment yet")
        return env

    def _check_secure_mode(self, env: Environment, client: ClientContext, scope: Scope) -> None:
        credentials = env.credentials
        if credentials is not None and credentials.secure_mode:
            check_secure_mode(credentials.sdk_key, client.context, query_value(scope, "h"))

    async def _client_context(self, route: Route, scope: Scope, receive: Receive) -> ClientContext:
        body = b""
        if route.context is None:
            _check_json(scope)
            body = await _read_body(receive, CONTEXT_LIMIT)
        return _context_of(route, scope, body)

    # polling -----------------------------------------------------------------------------------

    async def _evalx(
        self,
        env: Environment,
        client: ClientContext,
        availability: Availability,
        with_reasons: bool,
        scope: Scope,
        send: Send,
        cors: Headers,
    ) -> None:
        snapshot = env.snapshot
        etag = etag_of(snapshot.digest, view_name(availability, with_reasons), client.fingerprint)
        headers = [(b"etag", etag), (b"cache-control", b"no-cache"), *cors]
        if _matches(_header(scope, b"if-none-match"), etag):
            self.node.admission.counts["client_not_modified"] += 1
            await _respond(send, 304, b"", headers)
            return
        evaluated = self._admitted_results(snapshot, client, availability, with_reasons)
        await _respond(send, 200, evaluated.body, [(b"content-type", JSON), *headers])

    def _admitted_results(
        self,
        snapshot: Snapshot,
        client: ClientContext,
        availability: Availability,
        with_reasons: bool,
    ) -> Evaluated:
        """Results from the cache, or evaluated afresh if the evaluation budget allows: a storm
        of new contexts is answered 503 + Retry-After instead of taking the node's CPU."""
        view = view_name(availability, with_reasons)
        held = self.cache.held(etag_of(snapshot.digest, view, client.fingerprint))
        if held is not None:
            return held
        admission = self.node.admission
        if not admission.admit_evaluation():
            raise StoreUnavailable("too many new contexts to evaluate right now; retry later")
        started = admission.cpu_clock()
        try:
            return self.cache.client_results(
                snapshot,
                client,
                availability,
                with_reasons=with_reasons,
                keep_going=admission.evaluation_budget(),
            )
        except Stopped as exc:
            raise _too_costly(admission) from exc
        finally:
            admission.charge_evaluation(admission.cpu_clock() - started)

    # streaming ---------------------------------------------------------------------------------

    def stream_request(self, route: Route, scope: Scope, body: bytes) -> StreamRequest | None:
        """`route`'s stream request resolved without waiting (`body`: a REPORT's whole body), or
        None when the ASGI app must answer it: a credential the node does not know yet (it waits
        for a feed check first) or cannot serve, and every bad request (answered as always).
        Touches no counter, so the app can take the request over as if it had come first."""
        try:
            lookup, _unknown = self._lookup(route, scope)
            env = lookup()
            if env is None or not self.node.serves(env):
                return None
            return self._stream_request(route, env, scope, body)
        except FlagstaffError:
            return None

    def _stream_request(
        self, route: Route, env: Environment, scope: Scope, body: bytes
    ) -> StreamRequest:
        cors = cors_headers(origin_of(scope))
        availability = VIEW[route.credential]
        if route.name == "ping":
            return StreamRequest(
                env=env, kind="ping", client=None, availability=availability, cors=cors
            )
        if route.name == "ofrep_sse":
            try:
                fingerprint = bytes.fromhex(query_value(scope, "context") or "")
                view = Availability(query_value(scope, "view") or "")
            except ValueError as exc:
                raise InvalidInput(
                    "context and view must be as the bulk response's eventStreams url gave them",
                    path="context",
                ) from exc
            return StreamRequest(
                env=env,
                kind="ofrep",
                client=None,
                availability=view,
                fingerprint=fingerprint,
                cors=cors,
            )
        client = _context_of(route, scope, body)
        if route.credential == "client-side":
            self._check_secure_mode(env, client, scope)
        return StreamRequest(
            env=env,
            kind="eval",
            client=client,
            availability=availability,
            with_reasons=query_value(scope, "withReasons") == "true",
            cors=cors,
        )

    def _admit(self, request: StreamRequest) -> tuple[Snapshot, bytes]:
        """Admission for a new stream, and its opening event on the snapshot it starts from;
        raises `StoreUnavailable` (503 + Retry-After) when shed. Counts either way."""
        if not self.node.admission.admit_client_stream():
            raise StoreUnavailable("this node holds all the streams it can; retry later")
        snapshot = request.env.snapshot
        if request.kind == "eval":
            assert request.client is not None
            evaluated = self._admitted_results(
                snapshot, request.client, request.availability, request.with_reasons
            )
            return snapshot, sse.frame(b"put", evaluated.body)
        if request.kind == "ofrep":
            # tells a provider that fetched before this stream opened whether it missed a change
            view = ofrep_view(request.availability)
            return snapshot, refetch_message(etag_of(snapshot.digest, view, request.fingerprint))
        return snapshot, PING

    def _attach(self, request: StreamRequest, snapshot: Snapshot, channel: Stream) -> ClientStream:
        """Register an admitted stream: from here on every later snapshot reaches it."""
        stream = ClientStream(
            request.kind,
            channel,
            snapshot,
            client=request.client,
            fingerprint=request.fingerprint,
            availability=request.availability,
            with_reasons=request.with_reasons,
        )
        env = request.env
        self.reevaluator.add((env.project, env.key), stream)
        self.start()
        admission = self.node.admission
        admission.open_streams += 1
        admission.open_client_streams += 1
        admission.counts[f"client_stream_{request.kind}"] += 1
        return stream

    def _detach(self, env_id: EnvironmentId, stream: ClientStream) -> None:
        self.reevaluator.discard(env_id, stream)
        admission = self.node.admission
        admission.open_streams -= 1
        admission.open_client_streams -= 1
        if stream.channel.evicted:
            admission.counts["evicted"] += 1

    def _direct_ended(
        self, env_id: EnvironmentId, stream: ClientStream, _direct: DirectStream
    ) -> None:
        self._detach(env_id, stream)

    def _retry_hint(self) -> bytes:
        node = self.node
        return sse.retry_hint(int(node.config.retry_hint_ms * (1.0 + node.rng())))

    async def _stream(self, request: StreamRequest, receive: Receive, send: Send) -> None:
        node = self.node
        snapshot, opening = self._admit(request)
        channel = Channel(
            "v1",
            limit=node.config.channel_limit,
            deadline=node.admission.stream_deadline(),
            now=node.clock(),
        )
        channel.task = asyncio.current_task()
        # Registered before the first await: every later snapshot reaches this stream.
        stream = self._attach(request, snapshot, channel)
        env_id = (request.env.project, request.env.key)
        try:
            await send_stream(
                channel,
                receive,
                send,
                headers=[*SSE_HEADERS, *request.cors],
                opening=self._retry_hint() + opening,
                clock=node.clock,
            )
        except OSError:
            pass  # the client went away mid-write
        finally:
            self._detach(env_id, stream)

    def open_direct(
        self, request: StreamRequest, transport: Transport, default_headers: Headers
    ) -> DirectStream | None:
        """Serve `request` on its connection (what `_stream` does, without a task): the same
        admission, head and opening are written to `transport`, and the `DirectStream` returned
        becomes the connection's protocol. None when the stream was shed: the 503 is written
        and the connection closes."""
        node = self.node
        try:
            snapshot, opening = self._admit(request)
        except StoreUnavailable as exc:
            status, headers, body = self._problem(exc, request.cors)
            headers += [(b"content-length", b"%d" % len(body)), (b"connection", b"close")]
            transport.write(response_head(status, [*default_headers, *headers]) + body)
            transport.close()
            return None
        direct = DirectStream(
            "v1",
            transport,
            limit=WRITE_BUFFER_LIMIT,
            deadline=node.admission.stream_deadline(),
            clock=node.clock,
            ended=_not_attached,
        )
        stream = self._attach(request, snapshot, direct)
        direct.ended = partial(self._direct_ended, (request.env.project, request.env.key), stream)
        first = self._retry_hint() + opening
        head = response_head(
            200,
            [
                *default_headers,
                *SSE_HEADERS,
                *request.cors,
                *DIRECT_FRAMING,
            ],
        )
        transport.write(b"%b%x\r\n%b\r\n" % (head, len(first), first))
        return direct

    # OFREP -------------------------------------------------------------------------------------

    async def _ofrep(
        self, route: Route, scope: Scope, receive: Receive, send: Send, cors: Headers
    ) -> None:
        if route.name == "ofrep_sse":
            await self._ofrep_sse(route, scope, receive, send, cors)
            return
        env, availability = await self._ofrep_environment(scope)
        key = route.flag_key if route.name == "ofrep_flag" else None
        raw = await _read_body(receive, CONTEXT_LIMIT)
        try:
            request = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            failure = ofrep.Failure(status=400, code="PARSE_ERROR", details=f"invalid JSON: {exc}")
            await _json(send, 400, failure.body(key), cors)
            return
        client = ofrep.context_of(request)
        if isinstance(client, ofrep.Failure):
            await _json(send, client.status, client.body(key), cors)
            return
        snapshot = env.snapshot
        if key is None:
            etag = etag_of(snapshot.digest, ofrep_view(availability), client.fingerprint)
            headers = [(b"etag", etag), (b"cache-control", b"no-cache"), *cors]
            if _matches(_header(scope, b"if-none-match"), etag):
                self.node.admission.counts["client_not_modified"] += 1
                await _respond(send, 304, b"", headers)
                return
            if not self.node.admission.admit_evaluation():
                await self._rate_limited(send, cors)
                return
            admission = self.node.admission
            started = admission.cpu_clock()
            try:
                bulk = self._ofrep_bulk(env, client, availability, scope)
            finally:
                admission.charge_evaluation(admission.cpu_clock() - started)
            await _respond(send, 200, orjson.dumps(bulk), [(b"content-type", JSON), *headers])
            return
        data = self.cache.data(snapshot)
        flag = data.flag(key)
        if flag is None or not is_visible(flag, availability):
            missing = ofrep.Failure(status=404, code="FLAG_NOT_FOUND", details=f"no flag {key!r}")
            await _json(send, 404, missing.body(key), cors)
            return
        view = f"{ofrep_view(availability)}:{key}"
        etag = etag_of(snapshot.digest, view, client.fingerprint)
        headers = [(b"etag", etag), (b"cache-control", b"no-cache"), *cors]
        if _matches(_header(scope, b"if-none-match"), etag):
            self.node.admission.counts["client_not_modified"] += 1
            await _respond(send, 304, b"", headers)
            return
        if not self.node.admission.admit_evaluation():
            await self._rate_limited(send, cors)
            return
        admission = self.node.admission
        started = admission.cpu_clock()
        evaluation = evaluate(flag, client.context, data)
        admission.charge_evaluation(admission.cpu_clock() - started)
        error = ofrep.failure_of(evaluation)
        if error is not None:
            await _json(send, error.status, error.body(key), cors)
            return
        body = orjson.dumps(ofrep.success(key, flag, evaluation))
        await _respond(send, 200, body, [(b"content-type", JSON), *headers])

    def _ofrep_bulk(
        self, env: Environment, client: ClientContext, availability: Availability, scope: Scope
    ) -> dict[str, Any]:
        data = self.cache.data(env.snapshot)
        keep_going = self.node.admission.evaluation_budget()
        flags = []
        for key, flag in sorted(data.flags.items()):
            if flag.deleted or not is_visible(flag, availability):
                continue
            if not keep_going():
                raise _too_costly(self.node.admission)
            flags.append(ofrep.result_of(key, flag, evaluate(flag, client.context, data)))
        body: dict[str, Any] = {"flags": flags}
        credentials = env.credentials
        if credentials is not None and credentials.client_side_id:
            scheme = scope.get("scheme", "http")
            host = _header(scope, b"host").decode("latin-1") or "localhost"
            url = (
                f"{scheme}://{host}/ofrep/v1/sse/{credentials.client_side_id}"
                f"?context={client.fingerprint.hex()}&view={availability.value}"
            )
            body["eventStreams"] = [
                {"type": "sse", "url": url, "inactivityDelaySec": OFREP_INACTIVITY_SECONDS}
            ]
        return body

    async def _ofrep_environment(self, scope: Scope) -> tuple[Environment, Availability]:
        """OFREP's key (`Authorization: Bearer`, or `X-API-Key`): an SDK key sees every flag, a
        mobile key mobile flags, a client-side id browser flags."""
        header = _header(scope, b"authorization") or _header(scope, b"x-api-key")
        key = sdk_key_of(header) if header else ""
        if not key:
            raise Unauthorized("an SDK key, mobile key or client-side id is required")
        node, now = self.node, self.node.wall()

        def lookup() -> Environment | None:
            return (
                node.store.find(key, now)
                or node.store.find_mobile(key, now)
                or node.store.find_client_side(key)
            )

        env = await self._find(lookup, Unauthorized("unknown key"))
        credentials = env.credentials
        assert credentials is not None
        if key in credentials.sdk_keys(now):
            return env, Availability.ALL
        if key == credentials.client_side_id:
            if credentials.secure_mode:
                raise Forbidden(
                    "this environment is in secure mode: OFREP cannot prove a browser's context, "
                    "so use a mobile or SDK key from a server"
                )
            return env, Availability.CLIENT_SIDE
        return env, Availability.MOBILE

    async def _ofrep_sse(
        self, route: Route, scope: Scope, receive: Receive, send: Send, cors: Headers
    ) -> None:
        env = await self._authenticate(route, scope)
        await self._stream(self._stream_request(route, env, scope, b""), receive, send)

    # responses ---------------------------------------------------------------------------------

    async def _rate_limited(self, send: Send, cors: Headers) -> None:
        """OFREP's answer to a shed evaluation: 429 + Retry-After, which providers honour by
        pausing evaluation requests until then (the spec's rate-limit response)."""
        retry = b"%d" % self.node.admission.retry_after()
        failure = ofrep.Failure(
            status=429, code="GENERAL", details="too many evaluations right now; retry later"
        )
        body = orjson.dumps(failure.body(None))
        headers = [(b"retry-after", retry), (b"content-type", JSON), *cors]
        await _respond(send, 429, body, headers)

    async def _error(self, send: Send, exc: FlagstaffError, cors: Headers) -> None:
        status, headers, body = self._problem(exc, cors)
        await _respond(send, status, body, headers)

    def _problem(self, exc: FlagstaffError, cors: Headers) -> tuple[int, Headers, bytes]:
        """The problem-JSON answer to `exc`: status, headers (CORS, Retry-After on 503), body."""
        status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 500)
        headers = list(cors)
        if status == 503:
            headers.append((b"retry-after", b"%d" % self.node.admission.retry_after()))
        body: dict[str, Any] = {"code": exc.code, "message": exc.message, "status": status}
        if exc.path:
            body["path"] = exc.path
        headers.append((b"content-type", b"application/problem+json"))
        return status, headers, orjson.dumps(body)


def _too_costly(admission: Admission) -> ContentTooLarge:
    admission.counts["client_evaluation_too_costly"] += 1
    budget_ms = admission.limits.evaluation_cpu_seconds * 1000
    return ContentTooLarge(
        f"evaluating every flag for this context takes more than {budget_ms:g} ms of CPU, the"
        " most one request may use: send a smaller context (fewer array items, shorter strings)",
        path="context",
    )


def _not_attached(stream: DirectStream) -> None:
    """A direct stream's `ended` until it is registered (nothing to undo yet)."""


def _context_of(route: Route, scope: Scope, body: bytes) -> ClientContext:
    """The context from the path, or from a REPORT's whole `body`."""
    if route.context is not None:
        return read_context(decode_base64_json(route.context))
    _check_json(scope)
    check_size(len(body), field="body")
    return read_context(parse_json(body, "context"))


def _check_json(scope: Scope) -> None:
    content_type = _header(scope, b"content-type").split(b";")[0].strip().lower()
    if content_type != JSON:
        raise UnsupportedMediaType("REPORT bodies must be application/json contexts")


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise InvalidInput("the client went away before sending its body")
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ContentTooLarge(f"the body is larger than {limit} bytes", path="body")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def query_value(scope: Scope, name: str) -> str | None:
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return None
    values = parse_qs(raw.decode("latin-1")).get(name)
    return values[0] if values else None


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return b""


def _matches(if_none_match: bytes, etag: bytes) -> bool:
    if not if_none_match:
        return False
    return any(tag.strip().removeprefix(b"W/") == etag for tag in if_none_match.split(b","))


async def _respond(send: Send, status: int, body: bytes, headers: Headers) -> None:
    if status != 304:
        headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, body: Any, cors: Headers) -> None:
    await _respond(send, status, orjson.dumps(body), [(b"content-type", JSON), *cors])
