"""The HTTP connection protocol for a uvicorn server carrying the delivery plane: uvicorn's
httptools protocol, except that an SDK stream for a known key is served on the connection itself.

Once the response head is written, the transport is handed to a `DirectStream` (as uvicorn hands a
WebSocket upgrade to its own protocol): events go straight to the transport, the disconnect
arrives as `connection_lost`, and no ASGI task, queue, parser or request state stays alive per
stream. Every other request, including streams the node cannot answer at once (unknown key, not
ready yet), goes to the ASGI app unchanged. Admission decisions stay in `asgi.open_stream`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from flagstaff_server.delivery.admission import Admission
from flagstaff_server.delivery.asgi import open_stream, query_value, sdk_key_of, sse_headers
from flagstaff_server.delivery.fanout import DirectStream, Protocol

if TYPE_CHECKING:
    from uvicorn._types import ASGI3Application

    from flagstaff_server.delivery.node import DeliveryNode

NodeSource = Callable[[], "DeliveryNode | None"]
"""The node serving this process's streams, or None while there is none."""

STREAM_PATHS: dict[str, Protocol] = {"/all": "v1", "/sdk/stream": "v2"}

WRITE_BUFFER_LIMIT = 256 * 1024
"""Unsent bytes (beyond the kernel's socket buffer) a direct stream may hold when an event is
offered before it counts as too slow and is dropped: several full payloads."""


class DeliveryHttpProtocol(HttpToolsProtocol):
    """Use `protocol_for(node_source)` as uvicorn's `http` protocol class."""

    node_source: ClassVar[NodeSource]

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        # `app` differs from `self.app` when uvicorn's own concurrency limit answers instead.
        if app is not self.app or not self._open_direct_stream(cycle):
            super()._start_asgi_task(cycle, app)

    def _open_direct_stream(self, cycle: RequestResponseCycle) -> bool:
        scope = cycle.scope
        protocol = STREAM_PATHS.get(scope["path"])
        if protocol is None or scope["method"] != "GET" or scope["http_version"] != "1.1":
            return False
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
        for name, value in (*self.server_state.default_headers, *sse_headers(env)):
            head += (name, b": ", value, b"\r\n")
        head.append(b"transfer-encoding: chunked\r\n\r\n%x\r\n" % (len(hint) + len(payload)))
        head.append(hint)
        # The payload is one shared bytes object: written by reference, never copied per stream.
        self.transport.writelines((b"".join(head), payload, b"\r\n"))
        stream = DirectStream(
            protocol,
            self.transport,
            env.broadcaster,
            limit=WRITE_BUFFER_LIMIT,
            deadline=node.admission.stream_deadline(),
            clock=node.clock,
            ended=partial(_count_end, node.admission),
        )
        env.broadcaster.channels.add(stream)
        node.admission.open_streams += 1
        # From here on the connection is the stream's: uvicorn forgets it, as after an upgrade.
        self.connections.discard(self)
        self.transport.set_protocol(stream)
        return True

    def _refuse(self, node: DeliveryNode, message: str) -> None:
        body = orjson.dumps({"code": "service_unavailable", "message": message, "status": 503})
        self.transport.write(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\n"
            b"retry-after: %d\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%b"
            % (node.admission.retry_after(), len(body), body)
        )
        self.transport.close()


def _count_end(admission: Admission, stream: DirectStream) -> None:
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
