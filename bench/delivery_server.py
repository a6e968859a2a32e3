"""The servers `bench.delivery` measures, each run in its own process:
`python -m bench.delivery_server KIND PORT FLAGS [production] [--data-dir DIR] [--history K]`.
SIGUSR1 makes a streaming server publish one flag change whose value carries the wall-clock time
it was made (`ts-<seconds>`). `--data-dir` keeps the node's snapshots (and change logs) there
across runs; `--history K` starts the feed with K changes of `f0` after the initial data, as the
feed stands after K SIGUSR1 changes of an earlier run (so a restarted node finds the feed where
it left it).

Kinds: `flagstaff` (a delivery node under uvicorn with the direct stream protocol), `flagstaff-asgi`
(the same node, streams through the ASGI app), `floor` (a raw asyncio SSE broadcaster),
`uvicorn-idle` (a trivial ASGI app holding each stream open in its own task: uvicorn's share) and
`minimal` (a trivial ASGI app returning the pre-built `/sdk/latest-all` bytes: the polling floor).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

SDK_KEY = "sdk-bench"


def flag(key: str, version: int, value: str) -> dict[str, Any]:
    """A flag of about 700 bytes once encoded (the padding variation makes payloads realistic)."""
    return {
        "key": key,
        "version": version,
        "on": True,
        "prerequisites": [],
        "salt": key,
        "targets": [],
        "contextTargets": [],
        "rules": [],
        "fallthrough": {"variation": 0},
        "offVariation": 1,
        "variations": [value, "x" * 400],
        "clientSide": False,
        "clientSideAvailability": {"usingMobileKey": False, "usingEnvironmentId": False},
        "trackEvents": False,
        "trackEventsFallthrough": False,
        "debugEventsUntilDate": None,
        "deleted": False,
    }


def data_body(flags: int) -> bytes:
    items = {f"f{index}": flag(f"f{index}", 1, "init") for index in range(flags)}
    return orjson.dumps({"flags": items, "segments": {}})


def stamp() -> str:
    return f"ts-{time.time():.6f}"


def serve_flagstaff(
    port: int,
    flags: int,
    *,
    direct: bool,
    production_limits: bool,
    data_dir: Path | None = None,
    history: int = 0,
) -> None:
    import uvicorn
    import uvloop
    from flagstaff_server.adapters.memory import InMemoryStore
    from flagstaff_server.adapters.process_feed import InProcessChangeFeed
    from flagstaff_server.delivery import DeliveryConfig, DeliveryNode, Limits
    from flagstaff_server.delivery.connection import protocol_for

    store = InMemoryStore()
    feed = InProcessChangeFeed(store)
    version = [1]

    def write(kind: str, key: str, item: dict[str, Any]) -> None:
        with store.unit_of_work() as uow:
            seq = uow.changes.append(
                project="p",
                environment="e",
                kind=kind,  # type: ignore[arg-type]
                key=key,
                version=item.get("version", 1),
                item=item,
                at=datetime.now(UTC),
            )
        feed.publish(seq)

    write("environment", "e", {"sdkKey": SDK_KEY})
    for index in range(flags):
        write("flag", f"f{index}", flag(f"f{index}", 1, "init"))
    for _ in range(history):
        version[0] += 1
        write("flag", "f0", flag("f0", version[0], stamp()))
    # The reconnect storm is meant to meet the production limits; fan-out measures delivery alone.
    limits = (
        Limits()
        if production_limits
        else Limits(max_streams=100_000, full_sends_per_second=1e9, full_send_burst=10**9)
    )
    node = DeliveryNode(feed, DeliveryConfig(data_dir=data_dir, limits=limits))

    def change() -> None:
        version[0] += 1
        write("flag", "f0", flag("f0", version[0], stamp()))

    async def main() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, change)
        config = uvicorn.Config(
            node.app,
            host="127.0.0.1",
            port=port,
            log_level="error",
            access_log=False,
            lifespan="on",
            loop="uvloop",
            http=protocol_for(lambda: node) if direct else "httptools",
            backlog=16384,
        )
        await uvicorn.Server(config).serve()

    uvloop.run(main())


def serve_floor(port: int, flags: int) -> None:
    """A raw asyncio SSE broadcaster: one task per connection, writers in a set."""
    import uvloop

    put = b'event: put\ndata: {"path":"/","data":' + data_body(flags) + b"}\n\n"
    writers: set[asyncio.StreamWriter] = set()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )

    def chunk(data: bytes) -> bytes:
        return b"%x\r\n" % len(data) + data + b"\r\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        writer.write(head + chunk(put))
        writers.add(writer)
        await reader.read()
        writers.discard(writer)

    def change() -> None:
        item = orjson.dumps({"path": "/flags/f0", "data": flag("f0", 2, stamp())})
        data = chunk(b"event: patch\ndata: " + item + b"\n\n")
        for writer in writers:
            writer.write(data)

    async def main() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, change)
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=16384)
        await server.serve_forever()

    uvloop.run(main())


def serve_uvicorn_idle(port: int, flags: int) -> None:
    """uvicorn's own share: each stream is an ASGI task awaiting one shared future."""
    import uvicorn
    import uvloop

    put = b'event: put\ndata: {"path":"/","data":' + data_body(flags) + b"}\n\n"
    headers = [(b"content-type", b"text/event-stream")]
    changed: list[asyncio.Future[bytes]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": put, "more_body": True})
        while True:
            data = await asyncio.shield(changed[0])
            await send({"type": "http.response.body", "body": data, "more_body": True})

    def change() -> None:
        item = orjson.dumps({"path": "/flags/f0", "data": flag("f0", 2, stamp())})
        done, changed[0] = changed[0], asyncio.get_running_loop().create_future()
        done.set_result(b"event: patch\ndata: " + item + b"\n\n")

    async def main() -> None:
        changed.append(asyncio.get_running_loop().create_future())
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, change)
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="error",
            access_log=False,
            lifespan="off",
            loop="uvloop",
            http="httptools",
            backlog=16384,
        )
        await uvicorn.Server(config).serve()

    uvloop.run(main())


def serve_minimal(port: int, flags: int) -> None:
    """The polling floor: uvicorn + a raw ASGI app returning pre-built bytes and 304s."""
    import uvicorn

    body = data_body(flags)
    etag = b'"fixed"'

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if any(k == b"if-none-match" and v == etag for k, v in scope["headers"]):
            await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", etag)]})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"etag", etag),
            (b"content-length", b"%d" % len(body)),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="error",
        access_log=False,
        loop="uvloop",
        http="httptools",
        backlog=16384,
    )


def main() -> None:
    kind, port, flags = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if kind in ("flagstaff", "flagstaff-asgi"):
        parser = argparse.ArgumentParser(prog="bench.delivery_server")
        parser.add_argument("limits", nargs="?", choices=["production"])
        parser.add_argument("--data-dir", type=Path)
        parser.add_argument("--history", type=int, default=0)
        options = parser.parse_args(sys.argv[4:])
        serve_flagstaff(
            port,
            flags,
            direct=kind == "flagstaff",
            production_limits=options.limits == "production",
            data_dir=options.data_dir,
            history=options.history,
        )
    else:
        {"floor": serve_floor, "uvicorn-idle": serve_uvicorn_idle, "minimal": serve_minimal}[kind](
            port, flags
        )


if __name__ == "__main__":
    main()
