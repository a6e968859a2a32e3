"""Event POSTs served on the connection, without an ASGI task: a mixin for uvicorn's httptools
protocol, combined with delivery's by `with_event_posts(base, app_source)`.

A POST to an event endpoint whose credential the node knows at once, with a `Content-Length` body
small enough to be buffered by the protocol itself, is answered from the parser's callbacks: the
body is checked when it is complete, the journal append is queued, and the response is written
by the append's completion callback. No coroutine, task, ASGI message or middleware runs per
request, which is most of the cost of a request beside the JSON check and the fsync. Everything
else (unknown credentials that need the background probe, chunked or large bodies, `Expect:
100-continue`, preflights, errors of routing) goes to the ASGI app unchanged, which answers it
with the same steps (`ingest/asgi.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from flagstaff_server.delivery.direct_answers import finish_cycle
from flagstaff_server.ingest.asgi import Answer, IngestApp, Target, handles, problem, target_of
from flagstaff_server.ingest.keyring import Found

if TYPE_CHECKING:
    from uvicorn._types import ASGI3Application

log = logging.getLogger(__name__)

AppSource = Callable[[], IngestApp | None]
"""The ingest endpoints of this process, or None while they are not serving."""

DIRECT_BODY_LIMIT = HIGH_WATER_LIMIT
"""Largest body served on the connection: below uvicorn's read-pause mark, so the protocol never
stops reading while it waits for the rest of a body with no task to resume it."""


@dataclass(slots=True)
class _Request:
    cycle: RequestResponseCycle
    app: IngestApp
    target: Target
    found: Found
    headers: dict[bytes, bytes]


class EventPostProtocol(HttpToolsProtocol):
    """Use `with_event_posts(base, app_source)` as uvicorn's `http` protocol class."""

    app_source: ClassVar[AppSource]
    _awaiting_body: _Request | None = None
    _default_head: bytes | None = None
    """The server's default headers (`server: uvicorn`), encoded once per connection."""

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        # `app` differs from `self.app` when uvicorn's own concurrency limit answers instead.
        request = self._direct_request(cycle) if app is self.app else None
        if request is None:
            super()._start_asgi_task(cycle, app)
        elif cycle.more_body:
            self._awaiting_body = request
        else:  # a pipelined request, started after its body arrived
            self._serve(request)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        request = self._awaiting_body
        if request is not None and request.cycle is self.cycle:
            self._awaiting_body = None
            self._serve(request)

    def _direct_request(self, cycle: RequestResponseCycle) -> _Request | None:
        scope = cycle.scope
        if scope["method"] != "POST" or scope["http_version"] != "1.1":
            return None
        if cycle.waiting_for_100_continue or not handles(scope["path"]):
            return None
        app = type(self).app_source()
        if app is None:
            return None
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        limit = min(DIRECT_BODY_LIMIT, app.node.config.max_body_bytes)
        if length is None or not length.isdigit() or int(length) > limit:
            return None  # chunked, too large, or large enough to need flow control: ASGI
        target = target_of("POST", scope["path"], headers)
        if isinstance(target, Answer):
            return None
        found = app.node.keyring.known(target.credential_kind, target.credential)
        if found is None:
            return None  # unknown here: the ASGI path waits for the node's probe
        return _Request(cycle, app, target, found, headers)

    def _serve(self, request: _Request) -> None:
        if request.cycle.disconnected:
            return
        try:
            self._check_and_submit(request)
        except Exception:
            # inside a parser callback uvicorn would answer 400, which SDKs take as "drop it"
            log.exception("event request failed")
            request.cycle.keep_alive = False
            message = "the event request failed; retry it"
            self._respond(request, problem(500, "internal_error", message, request.target.cors))

    def _check_and_submit(self, request: _Request) -> None:
        cycle = request.cycle
        app = request.app
        answer = app.refusal(request.target, request.headers)
        if answer is None:
            body = bytes(cycle.body)
            cycle.body = bytearray()
            durable = app.submit(request.target, request.found, request.headers, body)
            if isinstance(durable, asyncio.Future):
                durable.add_done_callback(lambda done: self._acknowledge(request, done))
                return
            answer = durable if durable is not None else app.accepted(request.target)
        self._respond(request, answer)

    def _acknowledge(self, request: _Request, durable: asyncio.Future[object]) -> None:
        app = request.app
        failed = durable.cancelled() or durable.exception() is not None
        answer = app.unwritable(request.target) if failed else app.accepted(request.target)
        self._respond(request, answer)

    def _respond(self, request: _Request, answer: Answer) -> None:
        """Write the whole response and finish the request as uvicorn's ASGI `send` does."""
        cycle = request.cycle
        if cycle.disconnected:
            return  # the client went away; a durable payload stays, its retry is a repeat
        if self._default_head is None:
            self._default_head = b"".join(
                b"%s: %s\r\n" % header for header in self.server_state.default_headers
            )
        head = [STATUS_LINE[answer.status], self._default_head, b"date: ", request.app.date.now()]
        for name, value in answer.headers:
            head += (b"\r\n", name, b": ", value)
        if not cycle.keep_alive:
            head.append(b"\r\nconnection: close")
        head.append(b"\r\ncontent-length: %d\r\n\r\n" % len(answer.body))
        head.append(answer.body)
        self.transport.write(b"".join(head))
        finish_cycle(cycle, self.transport, answer.status)


def with_event_posts(
    base: type[HttpToolsProtocol], app_source: AppSource
) -> type[HttpToolsProtocol]:
    """uvicorn's `http=` protocol class: `base` (e.g. delivery's), plus event POSTs served on
    the connection for the endpoints `app_source` returns."""
    return type(
        "EventPostHttpProtocol",
        (EventPostProtocol, base),
        {"app_source": staticmethod(app_source)},
    )
