"""Servers in a background thread of the test process, on loopback: an ASGI app under uvicorn
(`serve_in_thread`) and a standard-library request handler (`serve_http`), each started before
the block runs and stopped at its end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn

from support.deadlines import wait_until
from support.ports import free_port


@dataclass(frozen=True, slots=True)
class ThreadedServer:
    """A uvicorn server started by `serve_in_thread`, with the event loop it runs on."""

    server: uvicorn.Server
    port: int
    loop: asyncio.AbstractEventLoop

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def serve_in_thread(
    app: Any,
    *,
    port: int | None = None,
    what: str = "uvicorn",
    stop_timeout: float = 15.0,
    **options: Any,
) -> Iterator[ThreadedServer]:
    """`app` under uvicorn on a loopback port (a free one unless given) in a daemon thread of its
    own; yields once the server is started, and stops it at the end. `options` are further
    `uvicorn.Config` arguments (lifespan is on and logging at warning unless they say otherwise)."""
    port = port or free_port()
    config: dict[str, Any] = {"lifespan": "on", "log_level": "warning", **options}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **config))
    loops: list[asyncio.AbstractEventLoop] = []

    def run() -> None:
        # asyncio.run's clean-up (pending tasks cancelled, async generators closed), with the loop
        # kept for callers that hand work to it
        with asyncio.Runner() as runner:
            loops.append(runner.get_loop())
            runner.run(server.serve())

    thread = threading.Thread(target=run, daemon=True, name=f"{what} on port {port}")
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), what=f"{what} to start")
        if not server.started:
            raise AssertionError(f"{what} stopped before it started serving")
        yield ThreadedServer(server=server, port=port, loop=loops[0])
    finally:
        server.should_exit = True
        thread.join(timeout=stop_timeout)


@dataclass(frozen=True, slots=True)
class ThreadedHttpServer:
    """A standard-library HTTP server started by `serve_http`."""

    server: ThreadingHTTPServer
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def serve_http(
    handler: Callable[..., BaseHTTPRequestHandler], *, port: int = 0
) -> Iterator[ThreadedHttpServer]:
    """`handler` (a `BaseHTTPRequestHandler` class, or a partial of one) answering on a loopback
    port (a free one unless given), each request in a daemon thread; the port listens before the
    block runs, and is closed at its end."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    bound = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, daemon=True, name=f"http.server on port {bound}"
    )
    thread.start()
    try:
        yield ThreadedHttpServer(server=server, port=bound)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
