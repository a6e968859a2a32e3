"""Management API throughput: flag reads (GET) and flag patches (semantic patch turnFlagOn/Off)
against a real `flagstaff serve` process on SQLite and on PostgreSQL, beside a floor in the same
run: `GET /api/v2/session/status` without a cookie, a route of the same API app (same server,
middleware and serialisation) that answers without touching the store. Reads and patches are
reported as multiples of the floor's time per request, and that floor as a multiple of a second
one measured in the same run: a minimal Starlette app on the same uvicorn settings answering the
same path with the same bytes (`bench.api_floor`).

Run `python -m bench.api`; prints requests per second with latency percentiles and writes
`build/bench/api.json`. Every phase is bounded by a request count and a time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg

from bench.servers import (
    Served,
    accepts,
    flagstaff_serve,
    free_port,
    postgres_database,
    stop,
    wait_until,
)

ADMIN_TOKEN = "bench-admin-token"
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"
OUTPUT = Path("build/bench/api.json")
FLOOR_PATH = "/api/v2/session/status"
"""The floor: an API route that reads no store without a session cookie (`GET /status` would not
do: it probes the store and the change feed, and bypasses the API app)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    backend: str
    operation: str
    concurrency: int
    requests: int
    errors: int
    seconds: float
    per_second: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms: float
    """The server process's CPU time per request."""


@contextmanager
def running_server(database: str | None) -> Iterator[Served]:
    """`flagstaff serve` on a free port, once `/status` answers 200."""
    options = () if database is None else ("--database", database)
    with flagstaff_serve(*options, env={"FLAGSTAFF_ADMIN_TOKEN": ADMIN_TOKEN}) as served:
        yield served


@contextmanager
def running_starlette_floor() -> Iterator[Served]:
    """`bench.api_floor` (the minimal Starlette app) on a free port, once it accepts."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="flagstaff-bench-floor-") as directory:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.api_floor", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: accepts(port), timeout=30, what="the Starlette floor to listen")
            yield Served(url=f"http://127.0.0.1:{port}", process=process, data_dir=Path(directory))
        finally:
            stop(process)


def seed(url: str) -> None:
    headers = {"Authorization": ADMIN_TOKEN}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        client.post("/api/v2/projects", json={"key": "bench", "name": "Bench"}).raise_for_status()
        for index in range(20):
            client.post(
                "/api/v2/flags/bench",
                json={"key": f"flag-{index}", "name": f"Flag {index}", "tags": ["bench"]},
            ).raise_for_status()


CONTENT_LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


class Connection:
    """One keep-alive HTTP/1.1 connection speaking just what this benchmark sends and the
    server answers (Content-Length bodies): a load generator light enough that the server,
    not the client, is what is measured (httpx costs ~2 ms of CPU a request, more than the
    server spends answering it)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, url: str) -> Connection:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer)

    async def send(self, method: str, path: str, body: bytes = b"", content_type: str = "") -> int:
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: {ADMIN_TOKEN}\r\n"
        if body:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        response = await self.reader.readuntil(b"\r\n\r\n")
        length = CONTENT_LENGTH.search(response)
        if length is None:
            raise RuntimeError(f"no Content-Length in {response[:200]!r}")
        await self.reader.readexactly(int(length.group(1)))
        return int(response[9:12])

    def close(self) -> None:
        self.writer.close()


async def hammer(
    served: Served,
    *,
    backend: str,
    operation: str,
    concurrency: int,
    count: int,
    seconds: float,
) -> Measurement:
    """Send up to `count` requests from `concurrency` connections, stopping at `seconds`."""
    latencies: list[float] = []
    errors = 0
    issued = 0
    connections = [await Connection.open(served.url) for _ in range(concurrency)]
    server = psutil.Process(served.process.pid)
    cpu_before = server.cpu_times()
    started = time.perf_counter()
    stop_at = started + seconds

    async def worker(number: int, connection: Connection) -> None:
        nonlocal errors, issued
        while issued < count and time.perf_counter() < stop_at:
            sequence = issued
            issued += 1
            key = f"flag-{(number + sequence) % 20}"
            begin = time.perf_counter()
            if operation in ("floor", "starlette"):
                status = await connection.send("GET", FLOOR_PATH)
            elif operation == "read":
                status = await connection.send("GET", f"/api/v2/flags/bench/{key}")
            else:
                kind = "turnFlagOn" if sequence % 2 == 0 else "turnFlagOff"
                body = json.dumps(
                    {"environmentKey": "production", "instructions": [{"kind": kind}]}
                )
                status = await connection.send(
                    "PATCH", f"/api/v2/flags/bench/{key}", body.encode(), SEMANTIC
                )
            latencies.append(time.perf_counter() - begin)
            if status != 200:
                errors += 1

    try:
        await asyncio.gather(*(worker(n, c) for n, c in enumerate(connections)))
    finally:
        for connection in connections:
            connection.close()
    elapsed = time.perf_counter() - started
    cpu_after = server.cpu_times()
    server_cpu = (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system)
    ordered = sorted(latencies)
    return Measurement(
        backend=backend,
        operation=operation,
        concurrency=concurrency,
        requests=len(latencies),
        errors=errors,
        seconds=round(elapsed, 3),
        per_second=round(len(latencies) / elapsed, 1),
        p50_ms=round(statistics.median(ordered) * 1000, 2),
        p99_ms=round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
        server_cpu_ms=round(server_cpu / max(1, len(latencies)) * 1000, 3),
    )


def measure(backend: str, served: Served, args: argparse.Namespace) -> list[Measurement]:
    seed(served.url)
    results = []
    phases = (
        ("starlette", args.concurrency),
        ("floor", args.concurrency),
        ("read", args.concurrency),
        ("patch", args.patch_concurrency),
    )
    with running_starlette_floor() as starlette:
        for operation, concurrency in phases:
            target = starlette if operation == "starlette" else served
            results.append(run_phase(target, backend, operation, concurrency, args))
    return results


def run_phase(
    served: Served, backend: str, operation: str, concurrency: int, args: argparse.Namespace
) -> Measurement:
    # A short warm-up so connection set-up and first-request costs are not measured.
    asyncio.run(
        hammer(served, backend=backend, operation=operation, concurrency=2, count=50, seconds=5)
    )
    return asyncio.run(
        hammer(
            served,
            backend=backend,
            operation=operation,
            concurrency=concurrency,
            count=args.count,
            seconds=args.seconds,
        )
    )


def floor_ratios(measurements: list[Measurement]) -> dict[tuple[str, str], float]:
    """Per backend, each operation's requests/s as a divisor of its floor's: how many times
    longer a read or patch takes than the API's cheapest route under the same load, and that
    route than the minimal Starlette app's."""
    rates = {(m.backend, m.operation): m.per_second for m in measurements}
    ratios = {}
    for m in measurements:
        under = {"floor": "starlette", "read": "floor", "patch": "floor"}.get(m.operation)
        base = rates.get((m.backend, under)) if under else None
        if base and m.per_second > 0:
            ratios[(m.backend, m.operation)] = round(base / m.per_second, 2)
    return ratios


FLOOR_OF = {"floor": "the Starlette floor", "read": "the API floor", "patch": "the API floor"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.api", description=__doc__)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--count", type=int, default=5000, help="requests per phase at most")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per phase at most")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent readers")
    parser.add_argument("--patch-concurrency", type=int, default=4, help="concurrent writers")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)

    measurements: list[Measurement] = []
    skipped: dict[str, str] = {}
    load_before = os.getloadavg()
    for backend in [name.strip() for name in args.backends.split(",") if name.strip()]:
        if backend == "sqlite":
            with running_server(None) as served:
                measurements += measure(backend, served, args)
        elif backend == "postgresql":
            with ExitStack() as stack:
                try:
                    url_of_db = stack.enter_context(postgres_database())
                except psycopg.OperationalError as exc:
                    skipped[backend] = f"PostgreSQL unreachable: {exc}"
                    continue
                with running_server(url_of_db) as served:
                    measurements += measure(backend, served, args)
        else:
            parser.error(f"unknown backend {backend!r} (sqlite, postgresql)")

    print(
        f"{'backend':<11} {'operation':<9} {'conc':>4} {'requests':>8} {'req/s':>9} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'cpu ms':>7} {'errors':>6}"
    )
    for m in measurements:
        print(
            f"{m.backend:<11} {m.operation:<9} {m.concurrency:>4} {m.requests:>8} "
            f"{m.per_second:>9.1f} {m.p50_ms:>8.2f} {m.p99_ms:>8.2f} {m.server_cpu_ms:>7.3f} "
            f"{m.errors:>6}"
        )
    ratios = floor_ratios(measurements)
    print(
        "load average (1, 5, 15 min): before "
        + " ".join(f"{x:.2f}" for x in load_before)
        + ", after "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    for (backend, operation), ratio in ratios.items():
        print(f"{backend}: {operation} takes {ratio:.2f}x {FLOOR_OF[operation]}'s time per request")
    for backend, reason in skipped.items():
        print(f"{backend}: skipped ({reason})")
    report: dict[str, Any] = {
        "benchmark": "api",
        "python": sys.version.split()[0],
        "measurements": [asdict(m) for m in measurements],
        "floor": FLOOR_PATH,
        "load_average": {"before": list(load_before), "after": list(os.getloadavg())},
        "ratios": {f"{backend}/{op}": ratio for (backend, op), ratio in ratios.items()},
        "skipped": skipped,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 1 if any(m.errors for m in measurements) else 0


if __name__ == "__main__":
    raise SystemExit(main())
