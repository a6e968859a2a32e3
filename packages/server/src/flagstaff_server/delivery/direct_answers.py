"""Whole answers written by uvicorn's httptools protocol itself, with no ASGI task: the plumbing
under `connection.DeliveryHttpProtocol`'s polls (`/sdk/latest-all`, `/sdk/poll`, evalx) and CORS
preflights.

A request without a body is decided when its headers are complete (`_early_answer`, given the
scope uvicorn began for it), before uvicorn builds its `RequestResponseCycle` (with an
`asyncio.Event`) and starts a task: when the subclass gives an `Answer`, it is written and the
request finished here; otherwise uvicorn goes on as always. Only a request uvicorn would start at
once takes this way: HTTP/1.1, no body, no upgrade, nothing in flight or queued before it on the
connection, the transport not over its write mark (then uvicorn's `send` would wait to drain),
and no `limit_concurrency` refusal due. A request that already has a cycle (a REPORT whose body
came in, a pipelined request started late) is finished with `write_answer(answer, cycle)`, as
uvicorn's `send` would finish it.

Keep-alive: uvicorn cancels and re-arms its idle timer for every request (a `call_later` each).
After an answer written here, one timer per connection is kept instead and checks, when it
fires, whether the connection has been idle for the whole timeout since the last answer;
`_unset_keepalive_if_required` (uvicorn's "a request is arriving") marks it busy. The timeout
means the same: a connection idle `timeout_keep_alive` seconds after its last response is closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

import httptools
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

if TYPE_CHECKING:
    from asyncio import TimerHandle, Transport
    from logging import Logger

    from flagstaff_server.asgi import Scope
    from flagstaff_server.delivery.answer import Answer


class DirectAnswerProtocol(HttpToolsProtocol):
    """Subclasses give `_early_answer`; this class writes it and keeps uvicorn's bookkeeping."""

    _answered_early = False
    """The request being parsed was answered at header-complete time (it has no cycle)."""
    _idle_since: float | None = None
    _idle_timer: TimerHandle | None = None

    def _early_answer(self, scope: Scope) -> Answer | None:
        """The whole answer to the bodiless request in `scope` (method, path, query string and
        headers filled in), or None to let uvicorn handle it."""
        return None

    # deciding at header-complete time --------------------------------------------------------

    def on_headers_complete(self) -> None:
        if self._may_answer_early():
            scope = cast("Scope", self.scope)
            scope["method"] = self.parser.get_method().decode("ascii")
            parsed = httptools.parse_url(self.url)
            path = parsed.path
            if b"%" not in path:  # a quoted path: uvicorn unquotes it, and answers it
                scope["path"] = path.decode("ascii")
                scope["raw_path"] = path
                scope["query_string"] = parsed.query or b""
                answer = self._early_answer(scope)
                if answer is not None:
                    self._answered_early = True
                    self.write_answer(answer, None)
                    return
        super().on_headers_complete()

    def _may_answer_early(self) -> bool:
        cycle = self.cycle
        if (cycle is not None and not cycle.response_complete) or self.pipeline:
            return False
        if self.flow.write_paused or self.root_path or self.limit_concurrency is not None:
            return False
        parser = self.parser
        if parser.get_http_version() != "1.1" or parser.should_upgrade():
            return False
        for name, value in self.headers:
            if name == b"transfer-encoding" or (name == b"content-length" and value != b"0"):
                return False
        return True

    def on_body(self, body: bytes) -> None:
        if not self._answered_early:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._answered_early:
            self._answered_early = False
            return
        super().on_message_complete()

    # writing -----------------------------------------------------------------------------------

    def write_answer(self, answer: Answer, cycle: RequestResponseCycle | None) -> None:
        """Write the whole response and finish the request as uvicorn's ASGI `send` does: with
        `cycle` for a request uvicorn began one for, None for one answered early."""
        keep_alive = cycle.keep_alive if cycle is not None else self.parser.should_keep_alive()
        head = STATUS_LINE[answer.status] + self._default_lines() + answer.head.lines
        if not keep_alive:
            head += b"connection: close\r\n"
        if answer.status != 304:
            head += b"content-length: %d\r\n" % len(answer.body)
        # The body is often a snapshot's shared bytes: written by reference, never joined.
        self.transport.writelines((head + b"\r\n", answer.body))
        if cycle is not None:
            finish_cycle(cycle, self.transport, answer.status)
            return
        if self.access_log:
            log_access(self.access_logger, cast("Scope", self.scope), answer.status)
        # uvicorn's on_response_complete, for a request with nothing queued behind it
        self.server_state.total_requests += 1
        if not keep_alive:
            self.transport.close()
            return
        self.flow.resume_reading()
        self._idle_since = self.loop.time()
        if self._idle_timer is None:
            self._idle_timer = self.loop.call_later(self.timeout_keep_alive, self._idle_check)

    _defaults: ClassVar[tuple[object, bytes]] = (None, b"")

    def _default_lines(self) -> bytes:
        """uvicorn's default headers (date, server) as header lines, joined again only when
        uvicorn replaces its list (once a second, for the date)."""
        defaults = self.server_state.default_headers
        held, lines = DirectAnswerProtocol._defaults
        if held is not defaults:
            lines = b"".join(b"%b: %b\r\n" % pair for pair in defaults)
            DirectAnswerProtocol._defaults = (defaults, lines)
        return lines

    # keep-alive --------------------------------------------------------------------------------

    def _unset_keepalive_if_required(self) -> None:
        self._idle_since = None  # a request is arriving, or the connection is gone
        super()._unset_keepalive_if_required()

    def _idle_check(self) -> None:
        self._idle_timer = None
        since = self._idle_since
        if since is None or self.transport.is_closing():
            return  # busy since: the next answer written here arms a timer again
        left = since + self.timeout_keep_alive - self.loop.time()
        if left <= 0:
            self.timeout_keep_alive_handler()
        else:
            self._idle_timer = self.loop.call_later(left, self._idle_check)


def finish_cycle(cycle: RequestResponseCycle, transport: Transport, status: int) -> None:
    """What uvicorn's ASGI `send` does once a whole response of `status` is written for
    `cycle`: the access log line, the cycle marked complete, the connection closed unless kept
    alive, the next pipelined request started."""
    if cycle.access_log:
        log_access(cycle.access_logger, cast("Scope", cycle.scope), status)
    cycle.response_started = True
    cycle.response_complete = True
    cycle.message_event.set()
    if not cycle.keep_alive:
        transport.close()
    cycle.on_response()


def log_access(logger: Logger, scope: Scope, status: int) -> None:
    """uvicorn's access log line."""
    logger.info(
        '%s - "%s %s HTTP/%s" %d',
        get_client_addr(scope),  # type: ignore[arg-type]
        scope["method"],
        get_path_with_query_string(scope),  # type: ignore[arg-type]
        scope["http_version"],
        status,
    )
