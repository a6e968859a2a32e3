"""Client-side delivery benchmarks against `flagstaff serve` (one process, SQLite, uvloop):
(a) browser `evalx` polls per second for a context with 50 flags (rules and 50/50 rollouts): one
    repeated context (evaluation cache hit), a new context on every request (evaluated every
    time), and conditional requests answered 304; wrk as the load generator;
(b) one flag change seen by 10k open browser streams (`/eval/{env}/{context}`, raw asyncio SSE
    clients in two other processes): seconds from the management API's PATCH answer to the last
    stream's `patch` event, and the server process's CPU seconds over that time (psutil), with
    10k distinct contexts and with one context shared by all; and the server's RSS per open client
    stream, for streams served on the connection (`flagstaff serve`) beside the same server with
    uvicorn's own HTTP protocol (every stream an ASGI task: what `flagstaff serve` did before),
    both measured in the same run.

Run `python -m bench.client_delivery [--quick] [--fan-out-only]`. Writes
`build/bench/client_delivery.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.servers import answers, flagstaff_serve, free_port, stop, wait_until

OUTPUT = Path("build/bench/client_delivery.json")
ADMIN = "bench-client-delivery-admin-token"
PROJECT = "bench"
ENV = "production"
FLAGS = 50
WORKERS = 2
OPEN_CONCURRENCY = 100

WRK_SCRIPT = """
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local function b64(data)
  local out = {}
  for i = 1, #data, 3 do
    local a, b, c = data:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = 4 - (b and 0 or 1) - (c and 0 or 1)
    for j = 1, chars do
      local k = math.floor(n / 64 ^ (4 - j)) % 64 + 1
      out[#out + 1] = alphabet:sub(k, k)
    end
  end
  return table.concat(out)
end
math.randomseed(os.time())
request = function()
  local context = '{"kind":"user","key":"u' .. math.random(1, 1000000000) .. '","plan":"free"}'
  return wrk.format("GET", "%(prefix)s" .. b64(context))
end
"""


def b64(obj: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def context_of(n: int) -> dict[str, Any]:
    return {"kind": "user", "key": f"user-{n}", "plan": "pro" if n % 3 == 0 else "free"}


# server ------------------------------------------------------------------------------------------


@contextmanager
def flagstaff(*, paced: bool = False) -> Iterator[tuple[str, psutil.Process]]:
    # Unpaced unless asked: the fan-out runs measure what 10k distinct contexts cost, so the
    # fresh-evaluation budget (1,000/s by default) must not shed their stream opens.
    unpaced = {} if paced else {"FLAGSTAFF_CLIENT_EVALUATIONS_PER_SECOND": "1000000"}
    with flagstaff_serve(env={"FLAGSTAFF_ADMIN_TOKEN": ADMIN, **unpaced}, timeout=30) as served:
        yield served.url, psutil.Process(served.process.pid)


def serve_asgi(port: int, data_dir: Path) -> None:
    """Worker: the same server as `flagstaff serve` (uvloop, httptools, no Date header), except
    that uvicorn's own HTTP protocol carries every request: each stream is an ASGI task."""
    import uvicorn
    from flagstaff_server.app import Flagstaff
    from flagstaff_server.settings import Settings

    settings = Settings(
        data_dir=data_dir,
        port=port,
        admin_token=ADMIN,
        seed_demo=False,
        client_evaluations_per_second=1_000_000,
    )
    server = Flagstaff(settings, announce=lambda line: None)
    uvicorn.run(
        server.asgi,
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        date_header=False,
        log_level="warning",
        timeout_graceful_shutdown=5,
    )


@contextmanager
def flagstaff_asgi() -> Iterator[tuple[str, psutil.Process]]:
    """`serve_asgi` in a process of its own, unpaced like the fan-out runs of `flagstaff`."""
    with tempfile.TemporaryDirectory(prefix="bench-client-asgi-") as directory:
        port = free_port()
        command = [sys.executable, "-m", "bench.client_delivery", "--serve-asgi", str(port)]
        process = subprocess.Popen([*command, directory], stdout=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            if process.poll() is not None:
                raise RuntimeError("the ASGI-protocol server exited")
            return answers(f"{url}/status") is not None

        try:
            wait_until(up, timeout=60, what="the ASGI-protocol server to answer /status")
            yield url, psutil.Process(process.pid)
        finally:
            stop(process)


def seed(api: httpx.Client) -> str:
    """Project with FLAGS browser flags, each: a rule on `plan`, then a 50/50 rollout."""
    created = api.post(
        "/api/v2/projects",
        json={"key": PROJECT, "name": "Bench", "environments": [{"key": ENV, "name": "P"}]},
    )
    created.raise_for_status()
    client_side_id: str = created.json()["environments"][0]["_id"]
    rule = {"variation": 1, "clauses": [{"attribute": "plan", "op": "in", "values": ["pro"]}]}
    rollout = {"variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]}
    path = f"/environments/{ENV}"
    for n in range(FLAGS):
        body = {
            "key": f"flag-{n}",
            "name": f"Flag {n}",
            "variations": [{"value": False}, {"value": True}],
            "clientSideAvailability": {"usingEnvironmentId": True, "usingMobileKey": True},
        }
        api.post(f"/api/v2/flags/{PROJECT}", json=body).raise_for_status()
        api.patch(
            f"/api/v2/flags/{PROJECT}/flag-{n}",
            json=[
                {"op": "replace", "path": f"{path}/on", "value": True},
                {"op": "add", "path": f"{path}/rules/0", "value": rule},
                {"op": "replace", "path": f"{path}/fallthrough", "value": {"rollout": rollout}},
            ],
        ).raise_for_status()
    return client_side_id


def wait_for_flags(url: str, client_side_id: str) -> None:
    path = f"{url}/sdk/evalx/{client_side_id}/contexts/{b64(context_of(1))}"

    def served() -> bool:
        response = answers(path)
        return response is not None and len(response.json()) == FLAGS

    wait_until(served, timeout=30, what="delivery to serve the seeded flags")


# (a) polling -------------------------------------------------------------------------------------


def wrk(url: str, seconds: float, *options: str) -> float:
    command = ["wrk", "-t2", "-c32", f"-d{seconds:.0f}s", "--latency", *options, url]
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60).stdout
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if found is None:
        raise RuntimeError(f"wrk printed no rate:\n{out}")
    return float(found.group(1))


def polling(url: str, client_side_id: str, seconds: float) -> dict[str, float]:
    prefix = f"/sdk/evalx/{client_side_id}/contexts/"
    same = f"{url}{prefix}{b64(context_of(1))}"
    etag = httpx.get(same).headers["ETag"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT.replace("%(prefix)s", prefix))
    try:
        return {
            "same_context_rps": wrk(same, seconds),
            "new_context_each_request_rps": wrk(f"{url}/", seconds, "-s", script.name),
            "not_modified_304_rps": wrk(same, seconds, "-H", f"If-None-Match: {etag}"),
        }
    finally:
        os.unlink(script.name)


# (b) fan-out -------------------------------------------------------------------------------------


async def hold_streams(
    port: int, client_side_id: str, count: int, first: int, shared: bool
) -> None:
    """Worker: open `count` streams, say READY, then report when each saw its first patch."""
    ready = asyncio.Event()
    opened = 0
    received: list[float] = []
    writers: list[asyncio.StreamWriter] = []
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)

    async def one(n: int) -> None:
        nonlocal opened
        context = context_of(0 if shared else n)
        async with gate:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writers.append(writer)
            request = (
                f"GET /eval/{client_side_id}/{b64(context)} HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
            )
            writer.write(request.encode())
            seen = b""
            while b"event: put" not in seen:
                chunk = await reader.read(65536)
                if not chunk:
                    raise ConnectionError("stream closed before its put")
                seen = seen[-64:] + chunk
        opened += 1
        if opened == count:
            ready.set()
        seen = b""
        while b"event: patch" not in seen:
            chunk = await reader.read(65536)
            if not chunk:
                return
            seen = seen[-64:] + chunk
        received.append(time.time())

    tasks = [asyncio.create_task(one(first + n)) for n in range(count)]
    await asyncio.wait_for(ready.wait(), timeout=300)
    print("READY", flush=True)
    await asyncio.wait(tasks, timeout=120)
    print(
        json.dumps(
            {
                "received": len(received),
                "first": min(received, default=0.0),
                "last": max(received, default=0.0),
            }
        ),
        flush=True,
    )
    for writer in writers:
        writer.close()


def fan_out(
    url: str, process: psutil.Process, client_side_id: str, n: int, shared: bool
) -> dict[str, Any]:
    port = int(url.rsplit(":", 1)[1])
    per_worker = n // WORKERS
    rss_before = process.memory_info().rss
    cpu_before_open = sum(process.cpu_times()[:2])
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.client_delivery",
                "--streams",
                str(port),
                client_side_id,
                str(per_worker),
                str(w * per_worker),
                "1" if shared else "0",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline()
            if line.strip() != "READY":
                raise RuntimeError(f"stream worker failed: {line!r}")
        open_cpu = sum(process.cpu_times()[:2]) - cpu_before_open
        time.sleep(1.0)  # let the opening burst settle so the change's CPU is measured alone
        rss = process.memory_info().rss
        reevaluation_before = reevaluation_cpu(url)
        cpu_before = sum(process.cpu_times()[:2])
        with httpx.Client(base_url=url, headers={"Authorization": ADMIN}) as api:
            value = {"variation": 0}
            response = api.patch(
                f"/api/v2/flags/{PROJECT}/flag-0",
                json=[
                    {"op": "replace", "path": f"/environments/{ENV}/fallthrough", "value": value}
                ],
            )
            answered = time.time()
            response.raise_for_status()
        reports = []
        for worker in workers:
            assert worker.stdout is not None
            reports.append(json.loads(worker.stdout.readline()))
        cpu_after = sum(process.cpu_times()[:2])
        reevaluation = reevaluation_cpu(url) - reevaluation_before
    finally:
        for worker in workers:
            worker.wait(timeout=60)
    received = sum(r["received"] for r in reports)
    last = max(r["last"] for r in reports)
    first = min(r["first"] for r in reports if r["received"])
    return {
        "streams": n,
        "contexts": 1 if shared else n,
        "notified": received,
        "seconds_to_first": round(first - answered, 3),
        "seconds_to_all": round(last - answered, 3),
        "server_cpu_seconds_for_change": round(cpu_after - cpu_before, 3),
        "of_which_reevaluation_cpu_seconds": round(reevaluation, 3),
        "server_cpu_seconds_to_open_streams": round(open_cpu, 3),
        "server_rss_mb_with_streams": round(rss / 2**20, 1),
        "server_rss_mb_before_streams": round(rss_before / 2**20, 1),
        "rss_kb_per_stream": round((rss - rss_before) / n / 1024, 1),
    }


async def poll_storm(url: str, client_side_id: str, count: int) -> dict[str, int]:
    """`count` evalx polls, each for a new context, over 200 keep-alive connections (raw
    sockets: an HTTP client library here would be slower than the budget): answers by status."""
    host, port = url.removeprefix("http://").split(":")
    statuses: dict[str, int] = {}
    pending = iter(range(count))

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        for n in pending:
            path = f"/sdk/evalx/{client_side_id}/contexts/{b64(context_of(n))}"
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            status = head.split(b" ", 2)[1].decode()
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            statuses[status] = statuses.get(status, 0) + 1
        writer.close()

    await asyncio.gather(*(connection() for _ in range(200)))
    return statuses


def storm(url: str, process: psutil.Process, client_side_id: str, count: int) -> dict[str, Any]:
    """A reconnect storm of `count` browsers with new contexts against the default budget."""
    cpu = process.cpu_times()
    started = time.monotonic()
    statuses = asyncio.run(poll_storm(url, client_side_id, count))
    elapsed = time.monotonic() - started
    after = process.cpu_times()
    return {
        "polls": count,
        "answers": statuses,
        "seconds": round(elapsed, 2),
        "server_cpu_seconds": round(after.user + after.system - cpu.user - cpu.system, 2),
    }


def reevaluation_cpu(url: str) -> float:
    """CPU seconds the server's re-evaluator has spent (its own thread-time count, in /status)."""
    delivery = httpx.get(f"{url}/status").json()["parts"]["delivery"]
    return float(delivery["clientReevaluationCpuSeconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1k streams, 2 s polls")
    parser.add_argument("--storm-only", action="store_true", help="only the paced poll storm")
    parser.add_argument(
        "--fan-out-only",
        action="store_true",
        help="only the fan-out runs: on the connection and through ASGI, side by side",
    )
    parser.add_argument("--streams", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--serve-asgi", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_asgi:
        serve_asgi(int(args.serve_asgi[0]), Path(args.serve_asgi[1]))
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.streams:
        port, env_id, count, first, shared = args.streams
        asyncio.run(hold_streams(int(port), env_id, int(count), int(first), shared == "1"))
        return
    streams = 1_000 if args.quick else 10_000
    seconds = 2.0 if args.quick else 5.0
    results: dict[str, Any] = {"machine": f"{os.cpu_count()} cores", "flags": FLAGS}
    if not args.fan_out_only:
        polls(results, streams, seconds, storm_only=args.storm_only)
    if args.storm_only:
        return
    servers = {"": flagstaff, "_asgi": flagstaff_asgi}
    for shared in (False, True):
        # the ASGI-protocol peer runs right after its `flagstaff serve` run, on the same load
        for suffix, server in servers.items():
            with (
                server() as (url, process),
                httpx.Client(base_url=url, headers={"Authorization": ADMIN}, timeout=30) as api,
            ):
                client_side_id = seed(api)
                wait_for_flags(url, client_side_id)
                name = "fan_out_shared_context" if shared else "fan_out_distinct_contexts"
                results[name + suffix] = fan_out(url, process, client_side_id, streams, shared)
                print(name + suffix, json.dumps(results[name + suffix]), flush=True)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(results, indent=2))


def polls(results: dict[str, Any], streams: int, seconds: float, *, storm_only: bool) -> None:
    """The paced storm, then (unless `storm_only`) the evalx polling rates."""
    with (
        flagstaff(paced=True) as (url, process),
        httpx.Client(base_url=url, headers={"Authorization": ADMIN}, timeout=30) as api,
    ):
        client_side_id = seed(api)
        wait_for_flags(url, client_side_id)
        results["poll_storm_paced"] = storm(url, process, client_side_id, streams)
        print(json.dumps(results["poll_storm_paced"]), flush=True)
    if storm_only:
        return
    with (
        flagstaff() as (url, process),
        httpx.Client(base_url=url, headers={"Authorization": ADMIN}, timeout=30) as api,
    ):
        client_side_id = seed(api)
        wait_for_flags(url, client_side_id)
        results["evalx"] = polling(url, client_side_id, seconds)
        print(json.dumps(results["evalx"]), flush=True)


if __name__ == "__main__":
    main()
