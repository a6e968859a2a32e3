"""Client-side delivery as one raw ASGI callable: LaunchDarkly browser, mobile and SDK-key
evaluation (`evalx` polls, `eval`/`meval`/`ping` streams), goals, and OFREP v1 (single and bulk
evaluation, change notifications over SSE), all with CORS and ETags. Browser events belong to
`flagstaff_server.ingest`. Handlers evaluate with the core on the environment's current snapshot
(compiled once per snapshot) and never touch the database. Fresh evaluations and stream opens go
through the node's admission control; cache hits and 304s do not.

This module builds the parts and dispatches to them: `client_route` (which endpoint),
`client_access` (which environment, which context), `client_evaluation` (admitted results),
`client_stream_opener` (streams, also served on the connection itself: `open_direct`, called by
`connection.DeliveryHttpProtocol`), `client_ofrep`, and `client_http` (bodies and answers).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.delivery import client_metrics
from flagstaff_server.delivery.answer import Answer, Head
from flagstaff_server.delivery.client_access import ClientAccess, check_secure, context_of
from flagstaff_server.delivery.client_evaluation import admitted_results
from flagstaff_server.delivery.client_http import (
    CONTEXT_LIMIT,
    JSON,
    check_json,
    etag_matches,
    header,
    problem,
    query_value,
    read_body,
    respond,
)
from flagstaff_server.delivery.client_ofrep import OfrepEndpoints
from flagstaff_server.delivery.client_route import STREAM_ROUTES, VIEW, Route, route_of
from flagstaff_server.delivery.client_stream import ReevaluationConfig, Reevaluator
from flagstaff_server.delivery.client_stream_opener import StreamOpener, StreamRequest
from flagstaff_server.delivery.cors import answer_preflight, cors_headers, origin_of
from flagstaff_server.delivery.evaluation_cache import EvaluationCache, etag_of, view_name
from flagstaff_server.delivery.fanout import DirectStream, Transport
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.store import Environment
from flagstaff_server.errors import FlagstaffError, NotFound

NO_GOALS_ETAG = b'"no-goals"'
"""Goals (click/page-view experiments) are not supported: always the same empty list."""


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
        self._access = ClientAccess(node)
        self._streams = StreamOpener(
            node, self._access, self.cache, self.reevaluator, start_reevaluation=self.start
        )
        self._ofrep = OfrepEndpoints(node, self._access, self.cache, self._streams)
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

    # streams served on the connection (`connection.DeliveryHttpProtocol`) -----------------------

    def stream_request(self, route: Route, scope: Scope, body: bytes) -> StreamRequest | None:
        """See `StreamOpener.stream_request`."""
        return self._streams.stream_request(route, scope, body)

    def open_direct(
        self, request: StreamRequest, transport: Transport, default_headers: Headers
    ) -> DirectStream | None:
        """See `StreamOpener.open_direct`."""
        return self._streams.open_direct(request, transport, default_headers)

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
            status, headers, body = problem(exc, cors, retry_after=self.node.admission.retry_after)
            await respond(send, status, body, headers)

    async def _dispatch(
        self, route: Route, scope: Scope, receive: Receive, send: Send, cors: Headers
    ) -> None:
        if route.name.startswith("ofrep"):
            await self._ofrep(route, scope, receive, send, cors)
            return
        env = await self._access.authenticate(route, scope)
        if route.name == "goals":
            headers = [(b"etag", NO_GOALS_ETAG), (b"cache-control", b"no-cache"), *cors]
            if etag_matches(header(scope, b"if-none-match"), NO_GOALS_ETAG):
                await respond(send, 304, b"", headers)
                return
            await respond(send, 200, b"[]", [(b"content-type", JSON), *headers])
            return
        if route.name in STREAM_ROUTES:
            body = b""
            if route.name == "stream" and route.context is None:
                check_json(scope)  # before reading: a body of another type is never read
                body = await read_body(receive, CONTEXT_LIMIT)
            request = self._streams.request(route, env, scope, body)
            await self._streams.serve(request, receive, send)
            return
        body = b""
        if route.context is None:
            check_json(scope)  # before reading: a body of another type is never read
            body = await read_body(receive, CONTEXT_LIMIT)
        answer = self._evalx(route, env, scope, body, cors)
        await respond(send, answer.status, answer.body, answer.headers)

    # polling -----------------------------------------------------------------------------------

    def evalx_answer(self, route: Route, scope: Scope, body: bytes) -> Answer | None:
        """The whole answer to an evalx poll (`body`: a REPORT's whole body) without waiting,
        for the connection (`connection.DeliveryHttpProtocol`): the same answer, counters and
        errors the ASGI route gives, or None when the app must answer (a credential the node
        does not know yet or cannot serve: it waits for a feed check first)."""
        cors = cors_headers(origin_of(scope))
        try:
            lookup, _unknown = self._access.lookup(route, scope)
            env = lookup()
            if env is None or not self.node.serves(env):
                return None
            return self._evalx(route, env, scope, body, cors)
        except FlagstaffError as exc:
            status, headers, problem_body = problem(
                exc, cors, retry_after=self.node.admission.retry_after
            )
            return Answer(status, Head.of(headers), problem_body)

    def _evalx(
        self, route: Route, env: Environment, scope: Scope, body: bytes, cors: Headers
    ) -> Answer:
        """The evalx answer for `env` (authenticated): results, or a 304 for the ETag held;
        raises `FlagstaffError` for a bad context, secure mode or an admission refusal."""
        client = context_of(route, scope, body)
        if route.credential == "client-side":
            check_secure(env, client, scope)
        with_reasons = query_value(scope, "withReasons") == "true"
        availability = VIEW[route.credential]
        snapshot = env.snapshot
        etag = etag_of(snapshot.digest, view_name(availability, with_reasons), client.fingerprint)
        headers = [(b"etag", etag), (b"cache-control", b"no-cache"), *cors]
        if etag_matches(header(scope, b"if-none-match"), etag):
            self.node.admission.counts["client_not_modified"] += 1
            return Answer(304, Head.of(headers), b"")
        evaluated = admitted_results(
            self.node.admission, self.cache, snapshot, client, availability, with_reasons
        )
        return Answer(200, Head.of([(b"content-type", JSON), *headers]), evaluated.body)
