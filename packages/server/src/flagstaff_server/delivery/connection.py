"""The HTTP connection protocol for a uvicorn server carrying the delivery plane: uvicorn's
httptools protocol, except that streams are served on the connection itself: server-side SDK
streams (`/all`, `/sdk/stream`) and client-side ones (`/eval`, `/meval`, `/ping`, `/mping`, OFREP
SSE; `delivery.client_side`).

Once the response head is written, the transport is handed to a `DirectStream` (as uvicorn hands a
WebSocket upgrade to its own protocol): events go straight to the transport, the disconnect
arrives as `connection_lost`, and no ASGI task, queue, parser or request state stays alive per
stream. A REPORT stream carries its context in the body, so it is opened once the body is complete
(no task waits for it meanwhile). Every other request, including streams the node cannot answer at
once (unknown key or id, not ready yet, a bad request, a body over the context limit), goes to the
ASGI app unchanged, which answers exactly as it does for any request. Admission decisions stay in
`asgi.open_stream` and `ClientDelivery`.

Other protocol mixins (event ingestion) may be combined with this class: `_start_asgi_task`,
`on_body`, `on_message_complete` and `connection_lost` handle only this class's own requests and
otherwise defer to the next class in the MRO.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar, cast

import orjson
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.answer import Answer
from flagstaff_server.delivery.asgi import open_stream, query_value, sdk_key_of, sse_headers
from flagstaff_server.delivery.client_http import CONTEXT_LIMIT
from flagstaff_server.delivery.client_route import STREAM_ROUTES, Route, handles, route_of
from flagstaff_server.delivery.cors import origin_of, preflight_answer
from flagstaff_server.delivery.direct_answers import DirectAnswerProtocol
from flagstaff_server.delivery.fanout import (
    DIRECT_FRAMING,
    WRITE_BUFFER_LIMIT,
    Broadcaster,
    DirectStream,
    Protocol,
)
from flagstaff_server.delivery.polling import POLL_PATHS, latest_all, v2_poll

if TYPE_CHECKING:
    from uvicorn._types import ASGI3Application

    from flagstaff_server.asgi import Scope
    from flagstaff_server.delivery.client_side import ClientDelivery
    from flagstaff_server.delivery.node import DeliveryNode

NodeSource = Callable[[], "DeliveryNode | None"]
"""The node serving this process's streams, or None while there is none."""

STREAM_PATHS: dict[str, Protocol] = {"/all": "v1", "/sdk/stream": "v2"}
MAX_URL_BYTES = 64 * 1024
"""The longest request target read. A browser's largest context (32 KiB, 43 KiB of base64) fits
with its path and query. uvicorn appends each piece of the URL to what it holds (a copy each
time) with no limit: one 100 MB request line held the event loop for 23 s."""

__all__ = ["WRITE_BUFFER_LIMIT", "DeliveryHttpProtocol", "NodeSource", "protocol_for"]


class DeliveryHttpProtocol(DirectAnswerProtocol):
    """Use `protocol_for(node_source)` as uvicorn's `http` protocol class."""

    node_source: ClassVar[NodeSource]

    _report: tuple[RequestResponseCycle, Route] | None = None
    """A client REPORT (stream or evalx poll) whose body is still arriving (at most one: uvicorn
    parses the next request only after this one's body)."""

    def _early_answer(self, scope: Scope) -> Answer | None:
        # polls and preflights without a body, before uvicorn makes a cycle for them
        path: str = scope["path"]
        method: str = scope["method"]
        if path in POLL_PATHS:
            return self._poll_answer(scope, path) if method == "GET" else None
        if method not in ("GET", "OPTIONS") or not handles(path):
            return None
        client = self._client_side()
        if client is None:
            return None
        if method == "OPTIONS":
            return preflight_answer(origin_of(scope))  # as `ClientDelivery` answers any
        route = route_of(method, path)
        if route is None or route.name != "evalx":
            return None
        return client.evalx_answer(route, scope, b"")

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        # `app` differs from `self.app` when uvicorn's own concurrency limit answers instead.
        if app is not self.app or not self._serve_directly(cycle):
            super()._start_asgi_task(cycle, app)

    def _serve_directly(self, cycle: RequestResponseCycle) -> bool:
        scope = cycle.scope
        if scope["http_version"] != "1.1":
            return False
        path = scope["path"]
        if path in POLL_PATHS:
            # a poll uvicorn began a cycle for (pipelined behind another request)
            answer = (
                self._poll_answer(cast("Scope", scope), path) if scope["method"] == "GET" else None
            )
            if answer is not None:
                self.write_answer(answer, cycle)
            return answer is not None
        protocol = STREAM_PATHS.get(path)
        if protocol is not None:
            return scope["method"] == "GET" and self._open_direct_stream(cycle, protocol)
        route = route_of(scope["method"], path) if handles(path) else None
        if route is None or (route.name != "evalx" and route.name not in STREAM_ROUTES):
            return False
        client = self._client_side()
        if client is None:
            return False
        if route.context is None and route.name in ("stream", "evalx"):
            # REPORT: the context is in the body; answered when the body is complete
            self._report = (cycle, route)
            if cycle.waiting_for_100_continue:
                cycle.waiting_for_100_continue = False
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            return True
        if route.name == "evalx":
            return self._answer_client_poll(client, route, cycle, b"")
        return self._open_client_stream(client, route, cycle, b"")

    def _client_side(self) -> ClientDelivery | None:
        node = type(self).node_source()
        return None if node is None else node.client_side

    _url_refused = False

    # the request line ------------------------------------------------------------------------

    def on_url(self, url: bytes) -> None:
        if len(self.url) + len(url) > MAX_URL_BYTES:
            self._url_refused = True
            body = orjson.dumps(
                {
                    "code": "uri_too_long",
                    "message": f"the request target is longer than {MAX_URL_BYTES} bytes",
                    "status": 414,
                }
            )
            self.transport.write(
                b"HTTP/1.1 414 URI Too Long\r\ncontent-type: application/problem+json\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n%b" % (len(body), body)
            )
            self.transport.close()
            raise UrlTooLong(len(self.url) + len(url))  # stops the parser: nothing more is read
        super().on_url(url)

    def send_400_response(self, msg: str) -> None:
        # uvicorn answers any parser error with a 400; a refused URL was answered already
        if not self._url_refused:
            super().send_400_response(msg)

    # a REPORT stream's body ------------------------------------------------------------------

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        report = self._report
        if report is not None and len(report[0].body) > CONTEXT_LIMIT:
            # Too large for a context: the app answers it (413) as always, reading what is held.
            self._report = None
            self._hand_to_app(report[0])

    def on_message_complete(self) -> None:
        super().on_message_complete()
        report = self._report
        if report is None:
            return
        self._report = None
        cycle, route = report
        client = self._client_side()
        if client is None:
            self._hand_to_app(cycle)
            return
        body = bytes(cycle.body)
        if route.name == "evalx":
            served = self._answer_client_poll(client, route, cycle, body)
        else:
            served = self._open_client_stream(client, route, cycle, body)
        if not served:
            self._hand_to_app(cycle)

    def connection_lost(self, exc: Exception | None) -> None:
        self._report = None
        super().connection_lost(exc)

    def _hand_to_app(self, cycle: RequestResponseCycle) -> None:
        """Start the ASGI task this class held back (past this class in the MRO: the classes
        before it have already declined the request)."""
        super()._start_asgi_task(cycle, self.app)

    # polls ---------------------------------------------------------------------------------------

    def _poll_answer(self, scope: Scope, path: str) -> Answer | None:
        """The answer to a poll for a key the node serves, the same the ASGI route gives
        (`delivery.polling`); None sends it to the app."""
        node = type(self).node_source()
        if node is None:
            return None
        headers = dict(scope["headers"])
        header = headers.get(b"authorization", b"")
        env = node.store.find(sdk_key_of(header), node.wall()) if header else None
        if env is None or not node.serves(env):
            return None  # the ASGI app decides between 401 and 503, waiting for a probe if need be
        if_none_match = headers.get(b"if-none-match", b"")
        if path == "/sdk/poll":
            return v2_poll(node, env, if_none_match, query_value(scope, "basis"))
        return latest_all(node, env, if_none_match, headers.get(b"accept-encoding", b""))

    def _answer_client_poll(
        self, client: ClientDelivery, route: Route, cycle: RequestResponseCycle, body: bytes
    ) -> bool:
        answer = client.evalx_answer(route, cast("Scope", cycle.scope), body)
        if answer is None:
            return False  # the app answers: a probe for a new credential
        self.write_answer(answer, cycle)
        return True

    # opening streams -------------------------------------------------------------------------

    def _open_client_stream(
        self, client: ClientDelivery, route: Route, cycle: RequestResponseCycle, body: bytes
    ) -> bool:
        # uvicorn's scope is a TypedDict: the same mapping the ASGI app is given
        request = client.stream_request(route, cast("Scope", cycle.scope), body)
        if request is None:
            return False  # the app answers: a probe for a new credential, or an error
        stream = client.open_direct(request, self.transport, self.server_state.default_headers)
        if stream is not None:
            self._hand_over(stream)
        return True

    def _open_direct_stream(self, cycle: RequestResponseCycle, protocol: Protocol) -> bool:
        scope = cycle.scope
        node = type(self).node_source()
        if node is None:
            return False
        header = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        env = node.store.find(sdk_key_of(header), node.wall()) if header else None
        if env is None or not node.serves(env):
            return False  # the ASGI app decides between 401 and 503, waiting for a probe if need be
        opening = open_stream(node, env, protocol, query_value(scope, "basis"))
        if isinstance(opening, str):
            self._refuse(node, opening)
            return True
        hint, payload = opening
        head = [b"HTTP/1.1 200 OK\r\n"]
        for name, value in (*self.server_state.default_headers, *sse_headers(env), *DIRECT_FRAMING):
            head += (name, b": ", value, b"\r\n")
        head.append(b"\r\n%x\r\n" % (len(hint) + len(payload)))
        head.append(hint)
        # The payload is one shared bytes object: written by reference, never copied per stream.
        self.transport.writelines((b"".join(head), payload, b"\r\n"))
        stream = DirectStream(
            protocol,
            self.transport,
            limit=WRITE_BUFFER_LIMIT,
            deadline=node.admission.stream_deadline(),
            clock=node.clock,
            ended=partial(_end_stream, node.admission, env.broadcaster),
        )
        env.broadcaster.channels.add(stream)
        node.admission.open_streams += 1
        self._hand_over(stream)
        return True

    def _hand_over(self, stream: DirectStream) -> None:
        # From here on the connection is the stream's: uvicorn forgets it, as after an upgrade.
        self.connections.discard(self)
        self.transport.set_protocol(stream)

    def _refuse(self, node: DeliveryNode, message: str) -> None:
        body = orjson.dumps({"code": "service_unavailable", "message": message, "status": 503})
        self.transport.write(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\n"
            b"retry-after: %d\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%b"
            % (node.admission.retry_after(), len(body), body)
        )
        self.transport.close()


class UrlTooLong(Exception):
    """Raised from the parser's URL callback once the URL passes `MAX_URL_BYTES` (answered)."""


def _end_stream(admission: Admission, broadcaster: Broadcaster, stream: DirectStream) -> None:
    broadcaster.channels.discard(stream)
    admission.open_streams -= 1
    if stream.evicted:
        admission.counts["evicted"] += 1


def protocol_for(node_source: NodeSource) -> type[DeliveryHttpProtocol]:
    """uvicorn's `http=` protocol class for a server whose delivery node `node_source` returns."""
    return type(
        "BoundDeliveryHttpProtocol",
        (DeliveryHttpProtocol,),
        {"node_source": staticmethod(node_source)},
    )
