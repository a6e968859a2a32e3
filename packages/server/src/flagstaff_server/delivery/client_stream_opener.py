"""Opening client-side streams (`eval`/`meval` evaluations, `ping`, OFREP change notifications):
a request resolved into a `StreamRequest`, admitted (counted either way), opened with its first
event and registered with the re-evaluator (`client_stream`), which keeps it current from then
on; unregistered when it ends. Served as an ASGI response or on the connection itself
(`open_direct`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from flagstaff_core import Availability

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.delivery import sse
from flagstaff_server.delivery.asgi import SSE_HEADERS, send_stream
from flagstaff_server.delivery.client_access import ClientAccess, check_secure, context_of
from flagstaff_server.delivery.client_context import ClientContext
from flagstaff_server.delivery.client_evaluation import admitted_results
from flagstaff_server.delivery.client_http import problem, query_value
from flagstaff_server.delivery.client_route import VIEW, Route
from flagstaff_server.delivery.client_stream import (
    PING,
    ClientStream,
    Reevaluator,
    StreamKind,
    ofrep_view,
    refetch_message,
)
from flagstaff_server.delivery.cors import cors_headers, origin_of
from flagstaff_server.delivery.evaluation_cache import EvaluationCache, etag_of
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
from flagstaff_server.errors import FlagstaffError, InvalidInput, StoreUnavailable


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


class StreamOpener:
    """`start_reevaluation()` makes sure the re-evaluator's task runs (a stream was added)."""

    def __init__(
        self,
        node: ServingNode,
        access: ClientAccess,
        cache: EvaluationCache,
        reevaluator: Reevaluator,
        *,
        start_reevaluation: Callable[[], None],
    ) -> None:
        self.node = node
        self._access = access
        self._cache = cache
        self._reevaluator = reevaluator
        self._start_reevaluation = start_reevaluation

    # requests ----------------------------------------------------------------------------------

    def stream_request(self, route: Route, scope: Scope, body: bytes) -> StreamRequest | None:
        """`route`'s stream request resolved without waiting (`body`: a REPORT's whole body), or
        None when the ASGI app must answer it: a credential the node does not know yet (it waits
        for a feed check first) or cannot serve, and every bad request (answered as always).
        Touches no counter, so the app can take the request over as if it had come first."""
        try:
            lookup, _unknown = self._access.lookup(route, scope)
            env = lookup()
            if env is None or not self.node.serves(env):
                return None
            return self.request(route, env, scope, body)
        except FlagstaffError:
            return None

    def request(self, route: Route, env: Environment, scope: Scope, body: bytes) -> StreamRequest:
        """The stream request of `route` for `env` (already authenticated)."""
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
        client = context_of(route, scope, body)
        if route.credential == "client-side":
            check_secure(env, client, scope)
        return StreamRequest(
            env=env,
            kind="eval",
            client=client,
            availability=availability,
            with_reasons=query_value(scope, "withReasons") == "true",
            cors=cors,
        )

    # opening, registering, closing -------------------------------------------------------------

    def _admit(self, request: StreamRequest) -> tuple[Snapshot, bytes]:
        """Admission for a new stream, and its opening event on the snapshot it starts from;
        raises `StoreUnavailable` (503 + Retry-After) when shed. Counts either way."""
        admission = self.node.admission
        if not admission.admit_client_stream():
            raise StoreUnavailable("this node holds all the streams it can; retry later")
        snapshot = request.env.snapshot
        if request.kind == "eval":
            assert request.client is not None
            evaluated = admitted_results(
                admission,
                self._cache,
                snapshot,
                request.client,
                request.availability,
                request.with_reasons,
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
        self._reevaluator.add((env.project, env.key), stream)
        self._start_reevaluation()
        admission = self.node.admission
        admission.open_streams += 1
        admission.open_client_streams += 1
        admission.counts[f"client_stream_{request.kind}"] += 1
        return stream

    def _detach(self, env_id: EnvironmentId, stream: ClientStream) -> None:
        self._reevaluator.discard(env_id, stream)
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

    # serving -----------------------------------------------------------------------------------

    async def serve(self, request: StreamRequest, receive: Receive, send: Send) -> None:
        """Serve `request` as the ASGI response, until the client goes or the stream is closed."""
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
        """Serve `request` on its connection (what `serve` does, without a task): the same
        admission, head and opening are written to `transport`, and the `DirectStream` returned
        becomes the connection's protocol. None when the stream was shed: the 503 is written
        and the connection closes."""
        node = self.node
        try:
            snapshot, opening = self._admit(request)
        except StoreUnavailable as exc:
            status, headers, body = problem(
                exc, request.cors, retry_after=node.admission.retry_after
            )
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


def _not_attached(stream: DirectStream) -> None:
    """A direct stream's `ended` until it is registered (nothing to undo yet)."""
