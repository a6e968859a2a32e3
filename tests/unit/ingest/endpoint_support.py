"""Support for the event endpoint tests: an ingest node's environment and credentials, request
helpers, and a real uvicorn server on loopback, in the test's event loop, speaking the protocol
`flagstaff serve` uses for event POSTs (`ingest/connection.py`) in front of the ASGI app."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn
from delivery_support import SDK_KEY
from flagstaff_server.ingest.asgi import IngestApp
from flagstaff_server.ingest.connection import with_event_posts
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

CLIENT_ID = "0" * 24
MOBILE_KEY = "mob-x"


def summary(count: int, variation: int = 0) -> bytes:
    counter = {"value": True, "variation": variation, "version": 1, "count": count}
    features = {"f": {"default": False, "counters": [counter]}}
    return orjson.dumps(
        [{"kind": "summary", "startDate": 1_000, "endDate": 7_200_000, "features": features}]
    )


def headers(payload_id: str | None = None, key: str = SDK_KEY) -> dict[str, str]:
    found = {"Authorization": key, "Content-Type": "application/json"}
    if payload_id is not None:
        found["X-LaunchDarkly-Payload-ID"] = payload_id
    return found


@dataclass
class Served:
    base_url: str
    port: int
    asgi_paths: list[str] = field(default_factory=list)
    """The paths of the requests that reached the ASGI app (the others the protocol served)."""


@contextlib.asynccontextmanager
async def served_with_counts(app: IngestApp, *, access_log: bool = False) -> AsyncIterator[Served]:
    paths: list[str] = []

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        paths.append(scope["path"])
        await app(scope, receive, send)

    config = uvicorn.Config(
        asgi,
        host="127.0.0.1",
        port=0,
        http=with_event_posts(HttpToolsProtocol, lambda: app),
        lifespan="off",
        date_header=False,
        log_level="info" if access_log else "warning",
        access_log=access_log,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        port: int = server.servers[0].sockets[0].getsockname()[1]
        yield Served(f"http://127.0.0.1:{port}", port, paths)
    finally:
        server.should_exit = True
        async with asyncio.timeout(10):
            await task


@contextlib.asynccontextmanager
async def served(app: IngestApp) -> AsyncIterator[str]:
    async with served_with_counts(app) as found:
        yield found.base_url
