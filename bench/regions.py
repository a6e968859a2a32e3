"""Two-region propagation, B beside A in the same run, all processes on loopback: region A is a
private PostgreSQL primary with `flagstaff serve --role api` and `--role delivery`; region B a
hot standby of it (streaming replication) with its own `--role delivery`, no Redis anywhere (both
delivery nodes poll their database's outbox, every 0.25 s by default). For each management-API
PATCH made in A, N SDK-like SSE clients (`GET /all`) on each region's delivery node record when
the `patch` arrives: propagation from the PATCH being sent, p50/p99/max per region and the ratio
of B's p99 to A's; and when B's standby had replayed the commit (polled every 20 ms).

Run `python -m bench.regions [--clients 50] [--changes 20]`. Writes `build/bench/regions.json`.
Every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from flagstaff_server.regions.postgres_cluster import PostgresCluster, PostgresInstance
from support.management import admin_client, create_flag, create_project, switch
from support.processes import ServeProcess, running

OUTPUT = Path("build/bench/regions.json")
ADMIN = "bench-regions-admin-token-0123456789"
CHANGE_TIMEOUT = 20.0


class Client:
    """One SDK-like FDv1 stream: when each version of `flag` arrived in a `patch`."""

    def __init__(self) -> None:
        self.arrivals: dict[int, float] = {}
        self.ready = asyncio.Event()

    async def run(self, url: str, sdk_key: str, flag: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 22)
        request = (
            f"GET /all HTTP/1.1\r\nHost: {host}\r\nAuthorization: {sdk_key}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        )
        writer.write(request.encode())
        event = b""
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                if line.startswith(b"event:"):
                    event = line[6:].strip()
                    if event == b"put":
                        self.ready.set()
                elif line.startswith(b"data:") and event == b"patch":
                    now = time.perf_counter()
                    data = json.loads(line[5:])
                    if data["path"] == f"/flags/{flag}":
                        self.arrivals.setdefault(data["data"]["version"], now)
        finally:
            writer.close()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 1),
        "p99": round(percentile(values, 0.99), 1),
        "max": round(max(values), 1),
    }


async def measure(
    urls: dict[str, str],
    sdk_key: str,
    api: httpx.Client,
    primary: PostgresInstance,
    standby: PostgresInstance,
    clients: int,
    changes: int,
) -> dict[str, Any]:
    groups = {name: [Client() for _ in range(clients)] for name in urls}
    tasks = [
        asyncio.create_task(client.run(urls[name], sdk_key, "banner"))
        for name, members in groups.items()
        for client in members
    ]
    everyone = [client for members in groups.values() for client in members]
    await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in everyone)), 60)
    sent: dict[int, float] = {}
    replayed: list[float] = []
    for index in range(changes):
        response = await asyncio.to_thread(api.get, "/api/v2/flags/shop/banner")
        version = response.json()["environments"]["production"]["version"] + 1
        sent[version] = time.perf_counter()
        await asyncio.to_thread(switch, api, "banner", on=index % 2 == 0)
        lsn = await asyncio.to_thread(primary.wal_lsn)
        await asyncio.to_thread(standby.wait_for_replay, lsn, timeout=CHANGE_TIMEOUT)
        replayed.append((time.perf_counter() - sent[version]) * 1000)
        deadline = time.monotonic() + CHANGE_TIMEOUT
        while not all(version in c.arrivals for c in everyone):
            if time.monotonic() > deadline:
                raise RuntimeError(f"change {version} did not reach every client")
            await asyncio.sleep(0.01)
        # the next change lands at another point of the 0.25 s poll cycle
        await asyncio.sleep(0.37)
    for task in tasks:
        task.cancel()
    result: dict[str, Any] = {}
    for name, members in groups.items():
        latency = [(c.arrivals[v] - t) * 1000 for c in members for v, t in sent.items()]
        result[name] = {"propagation_ms": summary(latency)}
    result["b_standby_replayed_ms"] = summary(replayed)
    return result


def serve(root: Path, region: str, role: str, database: str) -> ServeProcess:
    return ServeProcess(
        data_dir=root / f"{region}-{role}",
        name=f"{region}-{role}",
        admin_token=ADMIN,
        inherit_flagstaff_variables=False,
        env={"FLAGSTAFF_REGION": region},
        args=["--role", role, "--database", database, "--log-level", "warning"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    if not 1 <= args.clients <= 2000 or not 1 <= args.changes <= 500:
        parser.error("--clients must be 1-2000 and --changes 1-500")
    with (
        tempfile.TemporaryDirectory(prefix="flagstaff-bench-regions-") as scratch,
        PostgresCluster() as cluster,
    ):
        root = Path(scratch)
        a = cluster.start_primary("a")
        b = cluster.start_standby(a, "b")
        a_api, a_delivery = serve(root, "a", "api", a.url), serve(root, "a", "delivery", a.url)
        b_delivery = serve(root, "b", "delivery", b.url)
        with running(a_api, a_delivery, b_delivery), admin_client(a_api.url, ADMIN) as api:
            sdk_key = create_project(api).sdk_key
            create_flag(api, "banner")
            urls = {"a": a_delivery.url, "b": b_delivery.url}
            result = asyncio.run(measure(urls, sdk_key, api, a, b, args.clients, args.changes))
            result["feed_poll_seconds"] = {
                name: process.status()["parts"]["changeFeed"]["pollSeconds"]
                for name, process in (("a", a_delivery), ("b", b_delivery))
            }
    a_p99 = result["a"]["propagation_ms"]["p99"]
    result["p99_ratio_b_to_a"] = round(result["b"]["propagation_ms"]["p99"] / a_p99, 2)
    result["clients_per_region"] = args.clients
    result["changes"] = args.changes
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
