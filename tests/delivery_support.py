"""Test support for the delivery plane: complete SDK-format flags and segments, an outbox writer,
and a real uvicorn server running a delivery node in a background thread.

Shared by tests/unit/delivery, tests/integration/delivery and tests/e2e; asserts nothing itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery.connection import protocol_for
from flagstaff_server.services.ports import Change, ChangeFeed, ChangeKind
from support.threaded_servers import ThreadedServer, serve_in_thread

PROJECT = "default"
ENVIRONMENT = "production"
SDK_KEY = "sdk-test-production"


def flag(
    key: str,
    version: int = 1,
    *,
    on: bool = True,
    variations: tuple[Any, ...] = (False, True),
    fallthrough: int = 1,
    off: int = 0,
    rules: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A flag with every field present, as the official SDKs require."""
    return {
        "key": key,
        "version": version,
        "on": on,
        "prerequisites": [],
        "salt": key,
        "targets": [],
        "contextTargets": [],
        "rules": rules or [],
        "fallthrough": {"variation": fallthrough},
        "offVariation": off,
        "variations": list(variations),
        "clientSide": False,
        "clientSideAvailability": {"usingMobileKey": False, "usingEnvironmentId": False},
        "trackEvents": False,
        "trackEventsFallthrough": False,
        "debugEventsUntilDate": None,
        "deleted": False,
    }


def segment_rule_flag(key: str, segment_key: str, version: int = 1) -> dict[str, Any]:
    """Serves variation 1 (True) to members of `segment_key`, else variation 0 (False)."""
    rule = {
        "id": "in-segment",
        "variation": 1,
        "clauses": [
            {
                "attribute": "",
                "op": "segmentMatch",
                "values": [segment_key],
                "negate": False,
                "contextKind": "user",
            }
        ],
        "trackEvents": False,
    }
    return flag(key, version, fallthrough=0, rules=[rule])


def segment(key: str, version: int = 1, *, included: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "key": key,
        "version": version,
        "included": list(included),
        "excluded": [],
        "includedContexts": [],
        "excludedContexts": [],
        "rules": [],
        "salt": key,
        "deleted": False,
    }


def environment(sdk_key: str = SDK_KEY, **extra: Any) -> dict[str, Any]:
    """An "environment" change item (the format `delivery.credential.environment_item` makes)."""
    return {"sdkKey": sdk_key, "mobileKey": "mob-x", "clientSideId": "0" * 24, **extra}


def change(
    seq: int,
    kind: ChangeKind,
    key: str,
    item: dict[str, Any] | None,
    *,
    version: int | None = None,
    project: str = PROJECT,
    env: str = ENVIRONMENT,
) -> Change:
    if version is None:
        version = int(item["version"]) if item is not None and "version" in item else 1
    return Change(
        seq=seq,
        project=project,
        environment=env,
        kind=kind,
        key=key,
        version=version,
        item=item,
        at=datetime.now(UTC),
    )


@dataclass
class Outbox:
    """Appends changes to an in-memory store's outbox and announces them on the feed."""

    store: InMemoryStore
    feed: InProcessChangeFeed

    def write(
        self,
        kind: ChangeKind,
        key: str,
        item: dict[str, Any] | None,
        *,
        version: int | None = None,
        project: str = PROJECT,
        env: str = ENVIRONMENT,
    ) -> int:
        if version is None:
            version = int(item["version"]) if item is not None and "version" in item else 1
        with self.store.unit_of_work() as uow:
            seq = uow.changes.append(
                project=project,
                environment=env,
                kind=kind,
                key=key,
                version=version,
                item=item,
                at=datetime.now(UTC),
            )
        self.feed.publish(seq)
        return seq


@dataclass(frozen=True, slots=True)
class RunningServer(ThreadedServer):
    """A delivery node served by `serve`."""

    node: DeliveryNode

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the server's loop (node state belongs to it) and return its result."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout=10)


@contextmanager
def serve(
    feed: ChangeFeed,
    *,
    config: DeliveryConfig | None = None,
    port: int | None = None,
    node_factory: Callable[[ChangeFeed, DeliveryConfig], DeliveryNode] | None = None,
    direct: bool = False,
    **uvicorn_options: Any,
) -> Iterator[RunningServer]:
    """A uvicorn server running a delivery node on a free loopback port, in its own thread; with
    `direct`, under the HTTP protocol that serves the node's streams on the connection itself
    (`delivery.connection`), as `flagstaff serve` does. `uvicorn_options` are further
    `uvicorn.Config` arguments."""
    config = config or DeliveryConfig()
    node = (node_factory or DeliveryNode)(feed, config)
    options: dict[str, Any] = {"http": protocol_for(lambda: node)} if direct else {}
    options.update(uvicorn_options)
    with serve_in_thread(
        node.app,
        port=port,
        what="the delivery node",
        access_log=False,
        timeout_graceful_shutdown=1,
        **options,
    ) as running:
        yield RunningServer(node=node, port=running.port, loop=running.loop, server=running.server)


def memory_backend() -> tuple[InMemoryStore, InProcessChangeFeed, Outbox]:
    store = InMemoryStore()
    feed = InProcessChangeFeed(store, idle_check=0.2, retry_delay=0.1)
    return store, feed, Outbox(store, feed)


def data_dir(tmp: Path) -> Path:
    path = tmp / "delivery"
    path.mkdir(parents=True, exist_ok=True)
    return path


class UnreachableFeed:
    """A change feed whose backend is down: every call fails."""

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        raise ConnectionError("feed unreachable")
        yield  # pragma: no cover - makes this an async generator

    async def latest_seq(self) -> int:
        raise ConnectionError("feed unreachable")

    async def aclose(self) -> None:
        return None


def read_events(lines: Iterator[str], until: Callable[[str, Any], bool]) -> list[tuple[str, Any]]:
    """Parse SSE events from `lines` until one satisfies `until(name, data)` (included)."""
    events: list[tuple[str, Any]] = []
    name = ""
    for line in lines:
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and name:
            # every LaunchDarkly event has exactly one data line, so it is complete here
            parsed = json.loads(line.split(":", 1)[1].strip())
            events.append((name, parsed))
            if until(name, parsed):
                return events
            name = ""
    raise AssertionError(f"stream ended after {events}")


class FixedFeed:
    """A change feed that serves a fixed backlog, then stays silent; `head` is what `latest_seq`
    says (the backlog's last), `broken` makes `latest_seq` fail as an unreachable database does."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes
        self.head = changes[-1].seq if changes else 0
        self.broken = False

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        for item in self.changes:
            if item.seq > after_seq:
                yield item
        await asyncio.Event().wait()

    async def latest_seq(self) -> int:
        if self.broken:
            raise ConnectionError("database down")
        return self.head

    async def aclose(self) -> None:
        return None


async def fdv2_poll(
    client: httpx.AsyncClient, basis: str | None = None, *, sdk_key: str = SDK_KEY
) -> list[dict[str, Any]]:
    """The events of one FDv2 poll (`GET /sdk/poll`, from `basis` when given); fails on anything
    but 200."""
    params = {} if basis is None else {"basis": basis}
    response = await client.get("/sdk/poll", params=params, headers={"Authorization": sdk_key})
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


async def open_raw_stream(
    port: int, sdk_key: str = SDK_KEY, *, close: bool = False
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes, dict[str, str]]:
    """`GET /all` on a loopback connection of its own, written and read by hand (no HTTP client
    between the test and the wire): the reader and writer, the status line, and the response
    headers by lower-case name. `close` asks for `Connection: close`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = "Connection: close\r\n" if close else ""
    writer.write(
        f"GET /all HTTP/1.1\r\nHost: x\r\nAuthorization: {sdk_key}\r\n{connection}\r\n".encode()
    )
    await writer.drain()
    status = await reader.readline()
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.lower()] = value.strip()
    return reader, writer, status, headers
