"""Delivery benchmarks, each figure beside its peer from the same run:
(a) SSE fan-out of one change to N idle streams: Flagstaff (direct stream protocol, and through
    the ASGI app) beside a raw-asyncio broadcaster (the floor) and a trivial uvicorn app;
(b) a reconnect storm with a ~50 kB payload: FDv1 `put` for everyone beside FDv2 with a current
    `basis`, and after a delivery restart FDv2 clients whose basis is a few changes old, with the
    node's change log kept on disk beside the same restart without it (today's full transfer);
    (c) `/sdk/latest-all` 200/304 polling beside a minimal uvicorn app serving the same
    pre-built bytes and beside unleash-server 7.5.1 (npm) on PostgreSQL; (d) propagation of a
    management-API PATCH to 1,000 streams through `flagstaff serve` (embedded mode).

Run `python -m bench.delivery [--quick]`. Servers and load generators are separate processes on
loopback; every phase is bounded in count and time. Writes `build/bench/delivery.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import psutil

from bench import unleash
from bench.delivery_server import SDK_KEY, data_body
from bench.servers import accepts, answers, free_port, stop, wait_until

OUTPUT = Path("build/bench/delivery.json")
LOAD_WORKERS = 2
FANOUT_FLAGS = 40
STORM_FLAGS = 70  # ~50 kB payload
FANOUT_CHANGES = 5
FANOUT_GAP = 2.0
POLL_SECONDS = 4.0
POLL_ROUNDS = 5
"""Alternating rounds per server and status: on a shared machine one round can land on a busy
moment, so the best, the median and the CPU time over all rounds are reported."""
RESTART_CHANGES = 5
"""Changes made after the storm's clients took their basis, before the delivery node restarts."""


def pinned(cpus: set[int] | None) -> Any:
    """A `preexec_fn` pinning the child to `cpus` (None: no pinning)."""
    if cpus is None:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


def poll_cpus() -> tuple[set[int], set[int]] | None:
    """(load generator's CPUs, servers' CPUs) for the polling phase: wrk on the first CPU this
    process may use, every server on the others, so that the generator and the server under test
    never take turns on one core (unpinned, wrk's share of a core varied with the scheduler
    between rounds and servers). None with a single CPU."""
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        return None
    return {mine[0]}, set(mine[1:])


@contextmanager
def server(
    kind: str, flags: int, *options: str, cpus: set[int] | None = None
) -> Iterator[tuple[int, psutil.Process]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.delivery_server", kind, str(port), str(flags), *options],
        preexec_fn=pinned(cpus),
    )
    try:

        def listening() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"{kind} server exited with {process.returncode}")
            return accepts(port)

        wait_until(listening, timeout=30, what=f"the {kind} server to listen", interval=0.05)
        if kind.startswith("flagstaff"):
            wait_for_key(f"http://127.0.0.1:{port}", SDK_KEY, what="the delivery node's data")
        yield port, psutil.Process(process.pid)
    finally:
        stop(process, timeout=15)


def load(mode: str, port: int, count: int, path: str, key: str, *extra: str) -> list[Any]:
    """Start the load generator processes (`count` streams shared between them)."""
    share = [count // LOAD_WORKERS + (i < count % LOAD_WORKERS) for i in range(LOAD_WORKERS)]
    command = [sys.executable, "-m", "bench.delivery_load", mode, str(port)]
    workers = []
    for index, n in enumerate(share):
        output = OUTPUT.parent / f"load-{index}.json"
        output.unlink(missing_ok=True)
        worker = subprocess.Popen(
            [*command, str(n), path, key, str(output), *extra], stdout=subprocess.PIPE, text=True
        )
        worker.output = output  # type: ignore[attr-defined]
        workers.append(worker)
    return workers


def results(workers: list[Any]) -> list[dict[str, Any]]:
    out = []
    for worker in workers:
        worker.wait(timeout=240)  # beyond the generator's own bounds: it always reports
        out.append(json.loads(worker.output.read_text()))
    return out


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": float("nan"), "p99_ms": float("nan"), "max_ms": float("nan")}
    ordered = sorted(values)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 1),
        "p99_ms": round(1000 * ordered[max(0, int(len(ordered) * 0.99) - 1)], 1),
        "max_ms": round(1000 * ordered[-1], 1),
    }


# (a) fan-out --------------------------------------------------------------------------------------


def fan_out(kind: str, n: int) -> dict[str, Any]:
    """`FANOUT_CHANGES` changes, `FANOUT_GAP` seconds apart, each timed from its own stamp: the
    pooled percentiles are steadier on a shared machine than one change's."""
    with server(kind, FANOUT_FLAGS) as (port, process):
        before = process.memory_info().rss
        workers = load("fanout", port, n, "/all", SDK_KEY, str(FANOUT_CHANGES))
        ready = sum(int(worker.stdout.readline().split()[1]) for worker in workers)
        time.sleep(1.0)
        rss = process.memory_info().rss - before
        for _ in range(FANOUT_CHANGES):
            os.kill(process.pid, signal.SIGUSR1)
            time.sleep(FANOUT_GAP)
        got = results(workers)
    per_change: list[list[float]] = [[] for _ in range(FANOUT_CHANGES)]
    for r in got:
        for arrivals in r["arrivals"]:
            for index, (at, stamp) in enumerate(arrivals):
                per_change[index].append(at - stamp)
    pooled = [latency for change in per_change for latency in change]
    return {
        "kind": kind,
        "streams": n,
        "connected": ready,
        "received": len(pooled),
        "expected": ready * FANOUT_CHANGES,
        **percentiles(pooled),
        "p99_ms_per_change": [percentiles(change)["p99_ms"] for change in per_change],
        "rss_per_stream_kb": round(rss / max(1, ready) / 1024, 2),
    }


# (b) reconnect storm -----------------------------------------------------------------------------


def storm(n: int) -> list[dict[str, Any]]:
    """`n` clients connecting at once: Flagstaff with FDv1 (everyone needs the full payload, under
    the production admission limits), with FDv2 and a current basis (everyone is up to date), and
    the raw-asyncio floor (no admission): its time is what the kernel's listen queue and the load
    generator allow."""
    rows = []
    with server("flagstaff", STORM_FLAGS, "production") as (port, process):
        url = f"http://127.0.0.1:{port}"
        auth = {"Authorization": SDK_KEY}
        payload = len(httpx.get(f"{url}/sdk/latest-all", headers=auth).content)
        poll = httpx.get(f"{url}/sdk/poll", headers=auth).json()
        basis = poll["events"][-1]["data"]["state"]
        for label, path in (("fdv1 put", "/all"), ("fdv2 basis", f"/sdk/stream?basis={basis}")):
            rows.append(storm_round(label, port, process, n, path, payload))
    with server("floor", STORM_FLAGS) as (port, process):
        rows.append(storm_round("floor (raw asyncio)", port, process, n, "/all", payload))
    return rows


def storm_round(
    label: str, port: int, process: psutil.Process, n: int, path: str, payload: int
) -> dict[str, Any]:
    time.sleep(2.0)  # the previous round's streams are closed and the bucket refills
    before = process.memory_info().rss
    cpu_before = process.cpu_times()
    start = time.time() + 1.5
    workers = load("storm", port, n, path, SDK_KEY, f"{start:.3f}")
    peak = before
    while any(worker.poll() is None for worker in workers):
        peak = max(peak, process.memory_info().rss)
        time.sleep(0.05)
    cpu_after = process.cpu_times()
    got = results(workers)
    done = [t for r in got for t in r["done"]]
    received = [size for r in got for size in r["received"]]
    intents: Counter[str] = Counter()
    for r in got:
        intents.update(r["intents"])
    return {
        "kind": label,
        "clients": n,
        "payload_bytes": payload,
        "with_data": len(done),
        "all_data_s": round(max(done), 2) if done else float("nan"),
        "p50_s": round(statistics.median(done), 2) if done else float("nan"),
        "sheds": sum(r["sheds"] for r in got),
        "refused": sum(r["refused"] for r in got),
        "peak_rss_mb": round((peak - before) / 2**20, 1),
        "server_cpu_s": round(
            cpu_after.user + cpu_after.system - cpu_before.user - cpu_before.system, 2
        ),
        "intents": dict(intents),
        "bytes_per_client": round(statistics.mean(received)) if received else 0,
    }


def storm_after_restart(n: int) -> list[dict[str, Any]]:
    """`n` FDv2 clients whose basis is `RESTART_CHANGES` changes old (they were away while the
    changes were made) reconnecting at once to a delivery node just restarted from its data
    directory: once with the change log it kept there, once from a copy of the same directory
    without the log files (what a restart gave before the log was kept). Production limits."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-delivery-") as scratch:
        first = Path(scratch) / "first"
        options = ("production", "--data-dir", str(first))
        with server("flagstaff", STORM_FLAGS, *options) as (port, process):
            url = f"http://127.0.0.1:{port}"
            auth = {"Authorization": SDK_KEY}
            payload = len(httpx.get(f"{url}/sdk/latest-all", headers=auth).content)
            basis = state_of(url)
            for change in range(1, RESTART_CHANGES + 1):
                os.kill(process.pid, signal.SIGUSR1)  # one at a time: pending signals merge
                wait_until(
                    lambda change=change: seq_of(state_of(url)) == seq_of(basis) + change,  # type: ignore[misc]
                    timeout=10,
                    what="a change",
                )
            seq = seq_of(state_of(url))
            position = first / "position.json"
            wait_until(
                lambda: (
                    position.exists() and orjson.loads(position.read_bytes())["position"] >= seq
                ),
                timeout=10,
                what="the node's files on disk",
            )
        for label, keep_log in (
            ("fdv2 after restart, kept log", True),
            ("fdv2 after restart, no log", False),
        ):
            copy = Path(scratch) / ("kept" if keep_log else "without")
            shutil.copytree(first, copy)
            if not keep_log:
                shutil.rmtree(copy / "logs")
            again = ("production", "--data-dir", str(copy), "--history", str(RESTART_CHANGES))
            with server("flagstaff", STORM_FLAGS, *again) as (port, process):
                url = f"http://127.0.0.1:{port}"
                if seq_of(state_of(url)) != seq:
                    raise RuntimeError(f"the restarted node is not at seq {seq}")
                path = f"/sdk/stream?basis={basis}"
                rows.append(storm_round(label, port, process, n, path, payload))
    return rows


def state_of(url: str) -> str:
    """The FDv2 selector state the node at `url` serves now."""
    poll = httpx.get(f"{url}/sdk/poll", headers={"Authorization": SDK_KEY}).json()
    state: str = poll["events"][-1]["data"]["state"]
    return state


def seq_of(state: str) -> int:
    return int(state.split(".")[2])


# (c) polling -------------------------------------------------------------------------------------


def wrk(
    url: str, headers: dict[str, str], seconds: float, cpus: set[int] | None
) -> tuple[float, float, int]:
    """Requests per second, the p99 latency in milliseconds (wrk's `--latency` table) and the
    requests completed. One wrk thread per CPU it is pinned to, 64 connections."""
    threads = len(cpus) if cpus is not None else 2
    command = ["wrk", f"-t{threads}", "-c64", "--latency", f"-d{seconds:.0f}s"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run(
        [*command, url],
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        preexec_fn=pinned(cpus),
    )
    rate = p99 = requests = None
    for line in out.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            rate = round(float(line.split()[1]), 0)
        elif line.strip().startswith("99%"):
            p99 = _milliseconds(line.split()[1])
        elif " requests in " in line:
            requests = int(line.split()[0])
    if rate is not None and p99 is not None and requests is not None:
        return rate, p99, requests
    raise RuntimeError(f"wrk gave no rate: {out.stdout}{out.stderr}")


def _milliseconds(text: str) -> float:
    for unit, scale in (("ms", 1.0), ("us", 0.001), ("s", 1000.0), ("m", 60_000.0)):
        if text.endswith(unit):
            return round(float(text.removesuffix(unit)) * scale, 2)
    raise RuntimeError(f"wrk latency {text!r} has no known unit")


def _cpu_seconds(process: psutil.Process | None) -> float:
    """User + system CPU time of `process` so far (0 for a server not measured)."""
    if process is None:
        return 0.0
    times = process.cpu_times()
    return float(times.user + times.system)


def etag_of(url: str, key: str) -> tuple[str, int]:
    response = httpx.get(url, headers={"Authorization": key})
    response.raise_for_status()
    return response.headers["etag"], len(response.content)


def polling(seconds: float, rounds: int, skip_unleash: bool) -> list[dict[str, Any]]:
    """All servers run at once and are measured in alternation, `rounds` times each: on a shared
    machine the best of the rounds is the steadier figure (the median is kept too). wrk and the
    servers are pinned to separate CPUs (`poll_cpus`; unleash-server and its database are not).
    Each server's own CPU time over its rounds gives requests per CPU-second too: the figure
    that other work on the machine changes least (it takes turns on the core, not CPU time from
    each request)."""
    split = poll_cpus()
    load_cpus, server_cpus = split if split is not None else (None, None)
    with ExitStack() as stack:
        targets: dict[str, tuple[str, str]] = {}
        notes: dict[str, str] = {}
        processes: dict[str, psutil.Process] = {}
        for kind in ("flagstaff", "minimal"):
            port, process = stack.enter_context(server(kind, FANOUT_FLAGS, cpus=server_cpus))
            targets[kind] = (f"http://127.0.0.1:{port}/sdk/latest-all", SDK_KEY)
            processes[kind] = process
            if kind == "flagstaff":
                targets["flagstaff /sdk/poll"] = (f"http://127.0.0.1:{port}/sdk/poll", SDK_KEY)
                processes["flagstaff /sdk/poll"] = process
        name = f"unleash-server {unleash.VERSION}"
        if skip_unleash:
            notes[name] = "skipped (--quick)"
        else:
            try:
                url, token = stack.enter_context(unleash.running(FANOUT_FLAGS))
                targets[name] = (f"{url}/api/client/features", token)
            except unleash.Unavailable as exc:
                print(f"note: unleash-server column skipped: {exc}")
                notes[name] = f"skipped: {exc}"
        runs: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        cpu: Counter[tuple[str, str]] = Counter()
        sizes = {}
        for _ in range(rounds):
            for kind, (url, key) in targets.items():
                etag, sizes[kind] = etag_of(url, key)
                auth = {"Authorization": key}
                for status, headers in (("200", auth), ("304", {**auth, "If-None-Match": etag})):
                    before = _cpu_seconds(processes.get(kind))
                    runs.setdefault((kind, status), []).append(
                        wrk(url, headers, seconds, load_cpus)
                    )
                    cpu[(kind, status)] += _cpu_seconds(processes.get(kind)) - before
    rows: list[dict[str, Any]] = []
    for kind in targets:
        row: dict[str, Any] = {"kind": kind, "bytes": sizes[kind]}
        for status in ("200", "304"):
            measured = runs[(kind, status)]
            values = [rate for rate, _p99, _n in measured]
            best = max(measured)
            row[status] = best[0]
            row[f"{status}_p99_ms"] = best[1]
            row[f"{status}_median"] = statistics.median(values)
            row[f"{status}_runs"] = values
            row[f"{status}_p99_runs"] = [p99 for _rate, p99, _n in measured]
            used = cpu[(kind, status)]
            done = sum(n for _rate, _p99, n in measured)
            row[f"{status}_per_cpu_second"] = round(done / used) if used > 0 else None
        rows.append(row)
    rows += [{"kind": kind, "note": note} for kind, note in notes.items()]
    return rows


# (d) propagation ---------------------------------------------------------------------------------


REDIS_URL = "redis://127.0.0.1:6379/11"
"""A database index of its own: the feed's stream key must not meet other users' streams."""


@contextmanager
def backend(kind: str) -> Iterator[str | None]:
    """The `--database` for `flagstaff serve`; with PostgreSQL the change feed goes via Redis."""
    from bench.servers import postgres_database

    if kind == "embedded":
        yield None
        return
    import redis

    feed = redis.Redis.from_url(REDIS_URL)
    feed.delete("flagstaff:changes")
    os.environ["FLAGSTAFF_REDIS_URL"] = REDIS_URL
    try:
        with postgres_database() as database:
            yield database
    finally:
        del os.environ["FLAGSTAFF_REDIS_URL"]
        feed.delete("flagstaff:changes")
        feed.close()


def propagation(n: int, kind: str) -> dict[str, Any]:
    from bench.api import ADMIN_TOKEN, SEMANTIC, running_server

    with backend(kind) as database, running_server(database) as served:
        url = served.url
        admin = httpx.Client(base_url=url, headers={"Authorization": ADMIN_TOKEN}, timeout=30)
        admin.post("/api/v2/projects", json={"key": "bench", "name": "Bench"}).raise_for_status()
        admin.post("/api/v2/flags/bench", json={"key": "f", "name": "F"}).raise_for_status()
        environment = admin.get("/api/v2/projects/bench/environments/production").json()
        key = environment["apiKey"]
        port = int(url.rsplit(":", 1)[1])
        wait_for_key(url, key)
        workers = load("changes", port, n, "/all", key, str(FANOUT_CHANGES))
        ready = sum(int(worker.stdout.readline().split()[1]) for worker in workers)
        time.sleep(1.0)
        sent = []
        for index in range(FANOUT_CHANGES):
            instruction = "turnFlagOn" if index % 2 == 0 else "turnFlagOff"
            body = {"environmentKey": "production", "instructions": [{"kind": instruction}]}
            sent.append(time.time())
            admin.patch(
                "/api/v2/flags/bench/f",
                content=orjson.dumps(body),
                headers={"Content-Type": SEMANTIC},
            ).raise_for_status()
            time.sleep(FANOUT_GAP)
        got = results(workers)
    latencies = [
        at - sent[index]
        for r in got
        for arrivals in r["arrivals"]
        for index, (at, _stamp) in enumerate(arrivals)
    ]
    return {
        "kind": f"flagstaff serve ({kind})",
        "streams": n,
        "connected": ready,
        "received": len(latencies),
        "expected": ready * FANOUT_CHANGES,
        **percentiles(latencies),
    }


def wait_for_key(url: str, key: str, *, what: str = "the new environment in delivery") -> None:
    """Wait until `/sdk/latest-all` serves flags for `key`."""

    def served() -> bool:
        response = answers(f"{url}/sdk/latest-all", headers={"Authorization": key})
        return response is not None and bool(response.json()["flags"])

    wait_until(served, timeout=30, what=what)


# report ------------------------------------------------------------------------------------------


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1k streams, 2k storm, no unleash")
    parser.add_argument("--only", default="fanout,storm,poll,propagation")
    parser.add_argument("--streams", help="fan-out sizes, e.g. 1000,10000")
    args = parser.parse_args()
    phases = set(args.only.split(","))
    if "poll" in phases and shutil.which("wrk") is None:
        sys.exit("wrk is needed for the polling figures: apt-get install -y wrk")
    sizes = [1000] if args.quick else [1000, 5000, 10000]
    if args.streams:
        sizes = [int(size) for size in args.streams.split(",")]
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "uptime": [uptime()]}}
    print(f"payload {len(data_body(FANOUT_FLAGS))} B; {uptime()}")
    if "fanout" in phases:
        report["fanout"] = []
        for n in sizes:
            row = [
                fan_out(kind, n)
                for kind in ("flagstaff", "flagstaff-asgi", "uvicorn-idle", "floor")
            ]
            report["fanout"] += row
            floor = row[-1]
            for r in row:
                ratio = r["p99_ms"] / floor["p99_ms"]
                print(
                    f"fan-out {n:>6} {r['kind']:<15} p50 {r['p50_ms']:>7} p99 {r['p99_ms']:>7} "
                    f"max {r['max_ms']:>7} ms  {r['rss_per_stream_kb']:>5} KB/stream  "
                    f"received {r['received']}/{r['expected']}  "
                    f"p99 ratio to floor {ratio:.2f}"
                )
        report["machine"]["uptime"].append(uptime())
    if "storm" in phases:
        clients = 2000 if args.quick else 10000
        report["storm"] = storm(clients) + storm_after_restart(clients)
        for r in report["storm"]:
            print(f"storm {r}")
        report["machine"]["uptime"].append(uptime())
    if "poll" in phases:
        split = poll_cpus()
        report["machine"]["poll_cpus"] = None if split is None else [sorted(c) for c in split]
        report["poll"] = polling(2.0 if args.quick else POLL_SECONDS, POLL_ROUNDS, args.quick)
        ours = report["poll"][0]
        for r in report["poll"]:
            if "200" in r:
                for status in ("200", "304"):
                    per_cpu, floor = r[f"{status}_per_cpu_second"], ours[f"{status}_per_cpu_second"]
                    if per_cpu and floor:
                        print(
                            f"poll {r['kind']:<22} {status}: {per_cpu:>8,} requests per server "
                            f"CPU-second (flagstaff x{floor / per_cpu:.2f})"
                        )
                print(
                    f"poll {r['kind']:<22} {r['bytes']:>6} B  best of {POLL_ROUNDS}: "
                    f"200 {r['200']:>8,.0f}/s p99 {r['200_p99_ms']} ms "
                    f"(flagstaff x{ours['200'] / r['200']:.2f}, medians "
                    f"x{ours['200_median'] / r['200_median']:.2f})  "
                    f"304 {r['304']:>8,.0f}/s p99 {r['304_p99_ms']} ms "
                    f"(flagstaff x{ours['304'] / r['304']:.2f}, medians "
                    f"x{ours['304_median'] / r['304_median']:.2f})"
                )
            else:
                print(f"poll {r['kind']}: {r['note']}")
        report["machine"]["uptime"].append(uptime())
    if "propagation" in phases:
        report["propagation"] = []
        for kind in ("embedded", "postgresql+redis"):
            try:
                row = propagation(1000, kind)
            except Exception as exc:  # a missing service costs its row, not the whole run
                row = {"kind": f"flagstaff serve ({kind})", "note": f"failed: {exc!r}"}
            report["propagation"].append(row)
            print(f"propagation {row}")
        report["machine"]["uptime"].append(uptime())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
