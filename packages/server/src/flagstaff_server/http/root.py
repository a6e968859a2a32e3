"""The process's root ASGI callable: routes each request by path to the app that owns it (management
API, delivery, ...), answers `/status` and turns the ASGI lifespan into `start`/`stop` calls.

Dispatch is a short list of (predicate, app) pairs checked in order, not a framework router, so
the delivery hot path pays one string test. Which apps exist is decided in `flagstaff_server.app`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from flagstaff_server.asgi import ASGIApp, Receive, Scope, Send
from flagstaff_server.errors import FlagstaffError
from flagstaff_server.http.problem import PROBLEM_MEDIA_TYPE, problem_body

log = logging.getLogger(__name__)

PathTest = Callable[[str], bool]


class Lifecycle(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def status(self) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON body of `GET /status`."""
        ...


@dataclass(frozen=True, slots=True)
class Mount:
    """Requests whose path passes `owns` go to `app`."""

    owns: PathTest
    app: ASGIApp


async def send_json(send: Send, status: int, body: Any, media_type: str) -> None:
    payload = orjson.dumps(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", media_type.encode()),
                (b"content-length", str(len(payload)).encode()),
                (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def send_problem(send: Send, status: int, code: str, message: str) -> None:
    body = problem_body(status=status, code=code, message=message, path=None)
    await send_json(send, status, body, PROBLEM_MEDIA_TYPE)


class WhenReady:
    """An app that answers 503 "Flagstaff is starting" while `target()` gives None (before start,
    during shutdown), and hands each request to the app it gives otherwise."""

    def __init__(self, target: Callable[[], ASGIApp | None]) -> None:
        self.target = target

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.target()
        if app is None:
            await send_problem(send, 503, "service_unavailable", "Flagstaff is starting")
            return
        await app(scope, receive, send)


class RootApp:
    def __init__(self, lifecycle: Lifecycle) -> None:
        self.lifecycle = lifecycle
        self.mounts: list[Mount] = []
        # Why the last startup failed, for the command that ran the server to report.
        self.startup_error: str | None = None

    def mount(self, owns: PathTest, app: ASGIApp) -> None:
        self.mounts.append(Mount(owns, app))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        if scope["type"] not in ("http", "websocket"):
            return
        path: str = scope["path"]
        if path == "/status" and scope["type"] == "http":
            status, body = await self.lifecycle.status()
            await send_json(send, status, body, "application/json")
            return
        for mount in self.mounts:
            if mount.owns(path):
                await mount.app(scope, receive, send)
                return
        if scope["type"] == "http":
            await send_problem(send, 404, "not_found", f"no resource at {path}")

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.lifecycle.start()
                except FlagstaffError as exc:
                    # expected (bad settings, unreachable database): the message says it all
                    self.startup_error = exc.message
                    await send({"type": "lifespan.startup.failed", "message": exc.message})
                    return
                except Exception as exc:
                    log.exception("startup failed")
                    self.startup_error = f"{type(exc).__name__}: {exc}"
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await self.lifecycle.stop()
                except Exception as exc:
                    log.exception("shutdown failed")
                    await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return
