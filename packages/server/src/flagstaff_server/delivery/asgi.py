"""The delivery endpoints as one raw ASGI callable: FDv1 streaming and polling, the single-item
reads, FDv2 streaming and polling, and `/metrics`.

Handlers only authenticate, pick pre-encoded bytes from the environment's current snapshot and
write them; no framework, no JSON encoding, no database on these paths.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

import orjson

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.delivery import polling, sse
from flagstaff_server.delivery.answer import Answer
from flagstaff_server.delivery.fanout import Channel, Protocol
from flagstaff_server.delivery.metrics import CONTENT_TYPE
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.store import Environment

log = logging.getLogger(__name__)

JSON = b"application/json"
PATHS = ("/all", "/sdk/latest-all", "/sdk/flags", "/sdk/stream", "/sdk/poll", "/metrics")
PREFIXES = ("/sdk/flags/", "/sdk/segments/")


def handles(path: str) -> bool:
    """Whether `path` belongs to the delivery app (for a composition root that dispatches)."""
    return path in PATHS or path.startswith(PREFIXES)


def sdk_key_of(header: bytes) -> str:
    """The SDK key from an Authorization value: raw (what SDKs send), `api_key` or `Bearer`."""
    value = header.decode("latin-1").strip()
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() in ("api_key", "bearer"):
        return rest.strip()
    return value


class DeliveryApp:
    def __init__(self, node: ServingNode) -> None:
        self.node = node

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return
        path: str = scope["path"]
        if scope["method"] not in ("GET", "HEAD"):
            await _problem(send, 405, "method_not_allowed", "only GET is supported here")
            return
        if path == "/metrics":
            body = self.node.metrics_text()
            await _respond(send, 200, body, [(b"content-type", CONTENT_TYPE)])
            return
        if not handles(path):
            await _problem(send, 404, "not_found", f"no delivery endpoint at {path}")
            return
        env = self._known(scope) or await self._authenticate(scope, send)
        if env is None:
            return
        if path == "/all":
            await self._stream(env, "v1", scope, receive, send)
        elif path == "/sdk/stream":
            await self._stream(env, "v2", scope, receive, send)
        elif path == "/sdk/latest-all":
            await self._latest_all(env, scope, send)
        elif path == "/sdk/poll":
            await self._poll(env, scope, send)
        elif path == "/sdk/flags":
            await self._full(env, env.snapshot.flags_body(), send)
        else:
            await self._item(env, path, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Standalone use (`uvicorn app`): start and stop the node with the server."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.node.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.node.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # authentication ----------------------------------------------------------------------------

    def _known(self, scope: Scope) -> Environment | None:
        """The environment of a known key the node can serve: the common case, with no await."""
        node = self.node
        header = _header(scope, b"authorization")
        env = node.store.find(sdk_key_of(header), node.wall()) if header else None
        return env if env is not None and node.serves(env) else None

    async def _authenticate(self, scope: Scope, send: Send) -> Environment | None:
        node = self.node
        header = _header(scope, b"authorization")
        key = sdk_key_of(header) if header else ""
        if not key:
            await _problem(send, 401, "unauthorized", "an SDK key is required in Authorization")
            return None
        env = node.store.find(key, node.wall())
        if env is None and node.current:
            # The key may belong to an environment created a moment ago: wait for a feed check
            # that started after this request before calling it unknown.
            known = await node.probe()
            env = node.store.find(key, node.wall())
            if env is None and known:
                node.counts["unauthorized"] += 1
                await _problem(send, 401, "unauthorized", "unknown SDK key")
                return None
        if env is None or not node.serves(env):
            node.counts["not_ready"] += 1
            await self._unavailable(send, "this delivery node has no data for that key yet")
            return None
        return env

    async def _unavailable(self, send: Send, message: str) -> None:
        retry = b"%d" % self.node.admission.retry_after()
        await _problem(send, 503, "service_unavailable", message, [(b"retry-after", retry)])

    # polling -----------------------------------------------------------------------------------

    async def _latest_all(self, env: Environment, scope: Scope, send: Send) -> None:
        answer = polling.latest_all(
            self.node,
            env,
            _header(scope, b"if-none-match"),
            _header(scope, b"accept-encoding"),
        )
        await _answer(send, answer)

    async def _poll(self, env: Environment, scope: Scope, send: Send) -> None:
        answer = polling.v2_poll(
            self.node, env, _header(scope, b"if-none-match"), query_value(scope, "basis")
        )
        await _answer(send, answer)

    async def _full(self, env: Environment, body: bytes, send: Send) -> None:
        if not self.node.admission.admit_full_send():
            await self._unavailable(send, "too many full payloads right now; retry later")
            return
        await _respond(send, 200, body, _item_headers(env, env.snapshot))

    async def _item(self, env: Environment, path: str, send: Send) -> None:
        kind: sse.ItemKind = "flag" if path.startswith("/sdk/flags/") else "segment"
        key = path.rsplit("/", 1)[1]
        item = env.snapshot.items(kind).get(key)
        if item is None:
            await _problem(send, 404, "not_found", f"no {kind} {key!r} in this environment")
            return
        headers = [(b"content-type", JSON), (b"etag", b'"%d"' % item.version), *_env_header(env)]
        await _respond(send, 200, item.encoded, headers)

    # streaming ---------------------------------------------------------------------------------

    async def _stream(
        self, env: Environment, protocol: Protocol, scope: Scope, receive: Receive, send: Send
    ) -> None:
        node = self.node
        admission = node.admission
        opening = open_stream(node, env, protocol, query_value(scope, "basis"))
        if isinstance(opening, str):
            await self._unavailable(send, opening)
            return
        channel = Channel(
            protocol,
            limit=node.config.channel_limit,
            deadline=admission.stream_deadline(),
            now=node.clock(),
        )
        channel.task = asyncio.current_task()
        # Registered before the first await: every change after the opening snapshot reaches
        # this stream.
        env.broadcaster.channels.add(channel)
        admission.open_streams += 1
        try:
            await send_stream(
                channel,
                receive,
                send,
                headers=sse_headers(env),
                opening=b"".join(opening),
                clock=node.clock,
            )
        finally:
            env.broadcaster.channels.discard(channel)
            admission.open_streams -= 1
            if channel.evicted:
                admission.counts["evicted"] += 1


def open_stream(
    node: ServingNode, env: Environment, protocol: Protocol, basis: str | None
) -> tuple[bytes, bytes] | str:
    """Admission for a new stream: its opening bytes (the `retry:` hint, and the `put` or the
    FDv2 transfer for `basis`: a snapshot's shared bytes, never copied per stream), or why it was
    shed (the message of a 503). Counts either way."""
    admission = node.admission
    if not admission.admit_stream():
        return "this node holds all the streams it can; retry later"
    snapshot = env.snapshot
    if protocol == "v1":
        if not admission.admit_full_send():
            return "too many full payloads right now; retry later"
        payload = snapshot.put_event()
    else:
        transfer = snapshot.transfer_for(basis)
        if transfer.code == "xfer-full":
            if not admission.admit_full_send():
                return "too many full payloads right now; retry later"
        else:
            admission.counts["delta_send" if transfer.changes else "none_send"] += 1
        payload = snapshot.v2_stream_payload(transfer)
    admission.counts[f"stream_{protocol}"] += 1
    return sse.retry_hint(int(node.config.retry_hint_ms * (1.0 + node.rng()))), payload


async def send_stream(
    channel: Channel,
    receive: Receive,
    send: Send,
    *,
    headers: Headers,
    opening: bytes,
    clock: Callable[[], float],
) -> None:
    """Answer 200 with `headers` and `opening`, then write what `channel` yields until it ends or
    the client disconnects. An eviction's cancellation ends the stream quietly (the body is left
    unfinished, so the client sees it cut); a failed write (OSError) is raised to the caller."""
    watcher = asyncio.create_task(_watch_disconnect(receive, channel))
    try:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": opening, "more_body": True})
        channel.last_sent = clock()
        while (data := await channel.next()) is not None:
            await send({"type": "http.response.body", "body": data, "more_body": True})
            channel.last_sent = clock()
        if not channel.evicted:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not channel.evicted or task is None:
            raise
        task.uncancel()
    finally:
        watcher.cancel()


async def _watch_disconnect(receive: Receive, channel: Channel) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            channel.close("disconnected")
            return


# response helpers --------------------------------------------------------------------------------


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return b""


def query_value(scope: Mapping[str, Any], name: str) -> str | None:
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return None
    values = parse_qs(raw.decode("latin-1")).get(name)
    return values[0] if values else None


_env_header = polling.env_header
_item_headers = polling.item_headers


SSE_HEADERS: Headers = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def sse_headers(env: Environment) -> Headers:
    return [*SSE_HEADERS, *_env_header(env)]


async def _respond(send: Send, status: int, body: bytes, headers: Headers) -> None:
    headers.append((b"content-length", b"%d" % len(body)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _answer(send: Send, answer: Answer) -> None:
    if answer.status == 304:
        await send({"type": "http.response.start", "status": 304, "headers": answer.headers})
        await send({"type": "http.response.body", "body": b""})
    else:
        await _respond(send, answer.status, answer.body, list(answer.headers))


async def _problem(
    send: Send, status: int, code: str, message: str, extra: Headers | None = None
) -> None:
    body = orjson.dumps({"code": code, "message": message, "status": status})
    headers = [(b"content-type", b"application/problem+json"), *(extra or [])]
    await _respond(send, status, body, headers)
