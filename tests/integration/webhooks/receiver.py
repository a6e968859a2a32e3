"""A webhook receiver for the tests: a standard-library HTTP server on loopback that verifies the
`X-LD-Signature` of every request with the webhook's secret and records what came, in arrival
order. It can be taken down and brought back on the same port, and can hold a request (the
sender mid-delivery) until released."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import orjson
from support.ports import free_port
from support.threaded_servers import ThreadedHttpServer, serve_http

HOLD_LIMIT = 120.0
"""A held request is let go after this long even if the test never releases it."""


@dataclass(frozen=True, slots=True)
class Arrival:
    entry: str
    """The audit entry's `_id`."""
    resources: tuple[str, ...]
    date: int
    delivery: str
    attempt: str
    signed_correctly: bool


@dataclass
class Receiver:
    secret: str
    port: int = field(default_factory=free_port)
    arrivals: list[Arrival] = field(default_factory=list)
    status: int = 200
    hold_next: bool = False
    """The next request is held (no answer) until `release`."""
    held: threading.Event = field(default_factory=threading.Event)
    _release: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadedHttpServer | None = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def record(self, headers: Any, body: bytes) -> bool:
        """Keep the arrival; whether to hold it."""
        expected = hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        given = headers.get("X-LD-Signature") or ""
        entry = orjson.loads(body)
        arrival = Arrival(
            entry=entry["_id"],
            resources=tuple(entry["target"]["resources"]),
            date=entry["date"],
            delivery=headers.get("X-Flagstaff-Delivery") or "",
            attempt=headers.get("X-Flagstaff-Attempt") or "",
            signed_correctly=hmac.compare_digest(expected, given),
        )
        with self._lock:
            self.arrivals.append(arrival)
            hold, self.hold_next = self.hold_next, False
        return hold

    def release(self) -> None:
        self._release.set()

    def entries(self) -> list[str]:
        with self._lock:
            return [arrival.entry for arrival in self.arrivals]

    def all_signed_correctly(self) -> bool:
        with self._lock:
            return all(arrival.signed_correctly for arrival in self.arrivals)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if receiver.record(self.headers, body):
                    receiver.held.set()
                    receiver._release.wait(HOLD_LIMIT)
                with contextlib.suppress(OSError):  # the sender may be gone (killed)
                    self.send_response(receiver.status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler

    def up(self) -> None:
        self._server = self._stack.enter_context(serve_http(self.handler(), port=self.port))

    def down(self) -> None:
        """Stop listening: connections to the port are refused until `up`."""
        self._stack.close()
        self._stack = contextlib.ExitStack()
        self._server = None


@contextlib.contextmanager
def receiving(secret: str) -> Iterator[Receiver]:
    receiver = Receiver(secret=secret)
    receiver.up()
    try:
        yield receiver
    finally:
        receiver.release()
        receiver.down()


def first_arrivals(arrivals: list[Arrival]) -> list[Arrival]:
    """Each entry once, where it first arrived (a delivery repeated after a crash counts once)."""
    seen: set[str] = set()
    found = []
    for arrival in arrivals:
        if arrival.entry not in seen:
            seen.add(arrival.entry)
            found.append(arrival)
    return found
