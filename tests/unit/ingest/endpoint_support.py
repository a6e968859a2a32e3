"""Support for the event endpoint tests: an ingest node's environment and credentials, request
helpers, and a real uvicorn server on loopback, in the test's event loop, speaking the protocol
`flagstaff serve` uses for event POSTs (`ingest/connection.py`) in front of the ASGI app."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn
from delivery_support import SDK_KEY
from flagstaff_server.ingest.asgi import IngestApp
from flagstaff_server.ingest.connection import with_event_posts
from flagstaff_server.services.ports import Change
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

CLIENT_ID = "0" * 24
MOBILE_KEY = "mob-x"


class Feed:
    """One environment change, then silence."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        for item in self.changes:
            if item.seq > after_seq:
                yield item
        await asyncio.Event().wait()

    async def latest_seq(self) -> int:
        return self.changes[-1].seq

    async def aclose(self) -> None:
        return None


async def until(predicate: Callable[[], bool]) -> None:
    for _ in range(1000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached in 5 s")


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
