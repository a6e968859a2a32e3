"""Delivery benchmarks, each beside its floor in the same run: SSE fan-out (Flagstaff vs a minimal
raw-asyncio broadcaster) and `/sdk/latest-all` polling (Flagstaff vs a minimal uvicorn app serving
the same pre-built bytes). Reports ratios. Run: `python -m bench.delivery [--streams 1000,5000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

import psutil

SDK_KEY = "sdk-bench"
FLAGS = 40
STAMP = re.compile(rb"ts-([0-9.]+)")


def _flag(key: str, version: int, value: str) -> dict[str, Any]:
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


# servers (each runs in its own process) ----------------------------------------------------------


def serve_flagstaff(port: int) -> None:
    import uvicorn
    from flagstaff_server.adapters.memory import InMemoryStore
    from flagstaff_server.adapters.process_feed import InProcessChangeFeed
    from flagstaff_server.delivery import DeliveryConfig, DeliveryNode, Limits

    store = InMemoryStore()
    feed = InProcessChangeFeed(store)
    version = [1]

    def write(kind: str, key: str, item: Any, env_version: int = 1) -> None:
        with store.unit_of_work() as uow:
            seq = uow.changes.append(
                project="p",
                environment="e",
                kind=kind,  # type: ignore[arg-type]
                key=key,
                version=item.get("version", env_version) if item else env_version,
                item=item,
                at=datetime.now(UTC),
            )
        feed.publish(seq)

    write("environment", "e", {"sdkKey": SDK_KEY})
    for index in range(FLAGS):
        write("flag", f"f{index}", _flag(f"f{index}", 1, "init"))
    limits = Limits(max_streams=100_000, full_sends_per_second=1e9, full_send_burst=10**9)
    node = DeliveryNode(feed, DeliveryConfig(limits=limits, channel_limit=256))

    def change() -> None:
        version[0] += 1
        write("flag", "f0", _flag("f0", version[0], f"ts-{time.time():.6f}"))

    async def main() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, change)
        config = uvicorn.Config(
            node.app,
            port=port,
            log_level="error",
            access_log=False,
            lifespan="on",
            loop="uvloop",
            http="httptools",
            backlog=16384,
        )
        await uvicorn.Server(config).serve()

    import uvloop

    uvloop.run(main())


def _body() -> bytes:
    import orjson

    flags = {f"f{i}": _flag(f"f{i}", 1, "init") for i in range(FLAGS)}
    return orjson.dumps({"flags": flags, "segments": {}})


def serve_floor(port: int) -> None:
    """The floor: a raw asyncio SSE broadcaster holding writers in a set."""
    import uvloop

    body = _body()
    put = b'event: put\ndata: {"path":"/","data":' + body + b"}\n\n"
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
        item = b'{"path":"/flags/f0","data":{"key":"f0","variations":["ts-%.6f"]}}' % time.time()
        data = chunk(b"event: patch\ndata: " + item + b"\n\n")
        for writer in writers:
            writer.write(data)

    async def main() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, change)
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=16384)
        await server.serve_forever()

    uvloop.run(main())


def serve_minimal(port: int) -> None:
    """The polling floor: uvicorn + a raw ASGI app returning pre-built bytes and 304s."""
    import uvicorn

    body = _body()
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
        app, port=port, log_level="error", access_log=False, loop="uvloop", http="httptools"
    )


# clients ---------------------------------------------------------------------------------------


async def _stream_client(port: int, ready: list[int], latencies: list[float]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /all HTTP/1.1\r\nHost: b\r\nAuthorization: {SDK_KEY}\r\n\r\n".encode())
    buffer = b""
    while b"event: put" not in buffer:
        buffer += await reader.read(65536)
    ready[0] += 1
    buffer = b""
    while True:
        data = await reader.read(65536)
        if not data:
            return
        buffer += data
        found = STAMP.search(buffer)
        if found and b"event: patch" in buffer:
            latencies.append(time.time() - float(found.group(1)))
            writer.close()
            return


async def _fan_out(port: int, pid: int, n: int) -> dict[str, float]:
    server = psutil.Process(pid)
    before = server.memory_info().rss
    ready = [0]
    latencies: list[float] = []
    tasks = []
    for _ in range(n):
        tasks.append(asyncio.create_task(_stream_client(port, ready, latencies)))
        if len(tasks) % 200 == 0:
            await asyncio.sleep(0.02)
    for _ in range(2400):  # up to 120 s for every stream to get its put
        if ready[0] >= n:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    rss = (server.memory_info().rss - before) / max(1, ready[0])
    os.kill(pid, signal.SIGUSR1)
    await asyncio.wait(tasks, timeout=60)
    for task in tasks:
        task.cancel()
    latencies.sort()
    return {
        "connected": ready[0],
        "received": len(latencies),
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99) - 1] if latencies else float("nan"),
        "max_ms": 1000 * latencies[-1] if latencies else float("nan"),
        "rss_per_conn_kb": rss / 1024,
    }


async def _poll_load(port: int, seconds: float, etag: bytes | None, connections: int) -> float:
    request = f"GET /sdk/latest-all HTTP/1.1\r\nHost: b\r\nAuthorization: {SDK_KEY}\r\n".encode()
    if etag:
        request += b"If-None-Match: " + etag + b"\r\n"
    request += b"\r\n"
    count = [0]
    stop = time.monotonic() + seconds

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.monotonic() < stop:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
            if length:
                await reader.readexactly(int(length.group(1)))
            count[0] += 1
        writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return count[0] / seconds


def _etag(port: int) -> bytes:
    import httpx

    response = httpx.get(
        f"http://127.0.0.1:{port}/sdk/latest-all", headers={"Authorization": SDK_KEY}
    )
    return response.headers["etag"].encode()


def _start(kind: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-m", "bench.delivery", "--serve", kind, str(port)])
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            time.sleep(1.0)  # let the node catch up with its feed
            return process
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{kind} server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", nargs=2, metavar=("KIND", "PORT"))
    parser.add_argument("--streams", default="1000,5000,10000")
    parser.add_argument("--poll-seconds", type=float, default=5.0)
    args = parser.parse_args()
    if args.serve:
        kind, port = args.serve[0], int(args.serve[1])
        {"flagstaff": serve_flagstaff, "floor": serve_floor, "minimal": serve_minimal}[kind](port)
        return
    import uvloop

    for n in (int(x) for x in args.streams.split(",")):
        row = {}
        for kind, port in (("flagstaff", 18301), ("floor", 18302)):
            process = _start(kind, port)
            try:
                row[kind] = uvloop.run(_fan_out(port, process.pid, n))
            finally:
                process.terminate()
                process.wait()
        ours, floor = row["flagstaff"], row["floor"]
        print(f"fan-out n={n}: flagstaff {ours}")
        print(f"fan-out n={n}: floor     {floor}")
        print(f"fan-out n={n}: p99 ratio {ours['p99_ms'] / floor['p99_ms']:.2f}")
    rates = {}
    for kind, port in (("flagstaff", 18303), ("minimal", 18304)):
        process = _start(kind, port)
        try:
            etag = _etag(port)
            rates[(kind, 200)] = uvloop.run(_poll_load(port, args.poll_seconds, None, 32))
            rates[(kind, 304)] = uvloop.run(_poll_load(port, args.poll_seconds, etag, 32))
        finally:
            process.terminate()
            process.wait()
    for status in (200, 304):
        ours, floor = rates[("flagstaff", status)], rates[("minimal", status)]
        print(
            f"poll {status}: flagstaff {ours:,.0f} req/s, minimal uvicorn {floor:,.0f} req/s, "
            f"ratio {floor / ours:.2f}"
        )


if __name__ == "__main__":
    main()
