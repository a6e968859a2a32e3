"""Relay benchmarks, each figure beside its peer from the same run, all processes on loopback:
(a) two-hop propagation: a management-API PATCH on `flagstaff serve` → relay A → relay B → N
    SDK-like SSE clients (`GET /all`), p50/p99 from the PATCH being sent to each client's `patch`;
(b) fan-out: the same change fanned out by a delivery node (`flagstaff serve`, N clients) and by
    relay A (N clients), each measured as the spread from the first client of that node to
    receive the change to each client (the node's own broadcast work), p50/p99 and the ratio.

Run `python -m bench.relay [--clients 200] [--changes 20]`. Writes `build/bench/relay.json`.
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
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests/integration/relay"))

from relay_support import RelayProcess, Upstream, admin_client, relay_config
from support.management import Keys, create_flag, create_project, switch
from support.processes import running

OUTPUT = Path("build/bench/relay.json")
CHANGE_TIMEOUT = 20.0


class Client:
    """One SDK-like FDv1 stream: records when each version of `flag` arrived in a `patch`."""

    def __init__(self, group: str) -> None:
        self.group = group
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


async def measure(
    urls: dict[str, str], keys: Keys, api: httpx.Client, clients: int, changes: int
) -> dict[str, Any]:
    groups = {name: [Client(name) for _ in range(clients)] for name in urls}
    tasks = [
        asyncio.create_task(client.run(urls[name], keys.sdk_key, "banner"))
        for name, members in groups.items()
        for client in members
    ]
    everyone = [client for members in groups.values() for client in members]
    await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in everyone)), 60)
    sent: dict[int, float] = {}
    flag_url = "/api/v2/flags/shop/banner"
    for index in range(changes):
        response = await asyncio.to_thread(api.get, flag_url)
        before = response.json()["environments"]["production"]["version"]
        sent[before + 1] = time.perf_counter()
        await asyncio.to_thread(switch, api, "banner", on=index % 2 == 0)
        version = before + 1
        deadline = time.monotonic() + CHANGE_TIMEOUT
        while not all(version in c.arrivals for c in everyone):
            if time.monotonic() > deadline:
                raise RuntimeError(f"change {version} did not reach every client")
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
    for task in tasks:
        task.cancel()
    result: dict[str, Any] = {}
    for name, members in groups.items():
        latency = [(c.arrivals[v] - t) * 1000 for c in members for v, t in sent.items()]
        spread = []
        for version in sent:
            first = min(c.arrivals[version] for c in members)
            spread.extend((c.arrivals[version] - first) * 1000 for c in members)
        result[name] = {
            "propagation_ms": {
                "p50": statistics.median(latency),
                "p99": percentile(latency, 0.99),
            },
            "fanout_spread_ms": {
                "p50": statistics.median(spread),
                "p99": percentile(spread, 0.99),
            },
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flagstaff-bench-relay-") as scratch, ExitStack():
        root = Path(scratch)
        upstream = Upstream(data_dir=root / "upstream")
        with running(upstream), admin_client(upstream) as api:
            keys = create_project(api)
            create_flag(api, "banner")
            relay_a = RelayProcess(data_dir=root / "a", config=relay_config([upstream.url], keys))
            with running(relay_a):
                relay_b = RelayProcess(
                    data_dir=root / "b", config=relay_config([relay_a.url], keys)
                )
                with running(relay_b):
                    urls = {
                        "delivery": upstream.url,
                        "relay_a": relay_a.url,
                        "relay_b": relay_b.url,
                    }
                    result = asyncio.run(measure(urls, keys, api, args.clients, args.changes))
    delivery = result["delivery"]["fanout_spread_ms"]["p99"]
    relay = result["relay_a"]["fanout_spread_ms"]["p99"]
    result["fanout_p99_ratio_relay_to_delivery"] = relay / delivery if delivery else None
    result["clients_per_node"] = args.clients
    result["changes"] = args.changes
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
