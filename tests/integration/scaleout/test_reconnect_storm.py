"""A reconnect storm against a real `flagstaff serve` process: 1,000 raw asyncio SSE clients on
`/all` drop their streams at once and reconnect at once, twice, while a flag changes through the
management API. The node stays up, sheds what its full-send rate cannot take (503; the clients
back off as the SDKs' event sources do), its memory stays within a per-connection bound, and every
client ends up connected with the current flag."""

from __future__ import annotations

import asyncio
import json
import random
import re
import resource
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from delivery_support import open_raw_stream
from scaleout_cluster import ServerProcess, admin_client, create_project, switch_off, switch_on
from support.deadlines import eventually
from support.management import create_flag, ok
from support.prerequisites import missing_prerequisite
from support.processes import running

pytestmark = pytest.mark.slow

CLIENTS = 1_000
FULL_SENDS_PER_SECOND = 200
"""Well below what 1,000 clients reconnecting at once ask for, so the storm is throttled."""
FILES_NEEDED = CLIENTS + 512
"""Per process: the clients' sockets here, the streams' sockets in the server (which inherits
this process's limit), plus files and sockets of their own."""
MEMORY_PER_STREAM = 64 * 1024
"""A generous bound on the server's RSS per open stream (docs/delivery.md measures ~12 KB)."""
STORM_GROWTH_PER_STREAM = 32 * 1024
"""What two storms may add on top of the connected state (freed objects, allocator slack)."""
DEADLINE = 60.0


@dataclass
class Client:
    """One raw SSE client: whether its stream is open and which version of flag "a" it holds."""

    connected: bool = False
    version: int = 0
    writer: asyncio.StreamWriter | None = None
    refusals: int = 0
    """503s in a row, for the backoff."""


@dataclass
class Swarm:
    port: int
    sdk_key: str
    clients: list[Client] = field(default_factory=lambda: [Client() for _ in range(CLIENTS)])
    shed: int = 0

    async def run(self, client: Client) -> None:
        while True:
            try:
                await self.stream(client)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass  # dropped mid-read: reconnect, as an SDK does
            finally:
                client.connected = False
                if client.writer is not None:
                    client.writer.close()
                    client.writer = None

    async def stream(self, client: Client) -> None:
        reader, client.writer, status, headers = await open_raw_stream(self.port, self.sdk_key)
        if b" 503 " in status:
            assert int(headers["retry-after"]) >= 1
            self.shed += 1
            client.writer.close()
            client.writer = None
            # as the SDKs' event sources do: 1 s doubling per refusal, half of it jitter
            client.refusals += 1
            backoff = min(30.0, 2.0 ** (client.refusals - 1))
            await asyncio.sleep(backoff * (0.5 + 0.5 * random.random()))
            return
        assert b" 200 " in status, status
        client.refusals = 0
        assert headers["transfer-encoding"] == "chunked"
        client.connected = True
        buffer = b""
        while True:
            # one HTTP chunk at a time; events may span chunks, so they are split on blank lines
            size_line = await reader.readline()
            if not size_line.strip():
                return  # the connection ended
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                return
            buffer += await reader.readexactly(size)
            await reader.readexactly(2)
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                record(block, client)

    def drop_all(self) -> None:
        """Abort every open stream at the same moment."""
        for client in self.clients:
            if client.writer is not None:
                client.writer.transport.abort()

    def all_current(self, version: int) -> bool:
        return all(c.connected and c.version == version for c in self.clients)

    def summary(self) -> str:
        versions = Counter(c.version for c in self.clients)
        connected = sum(c.connected for c in self.clients)
        return f"{connected} connected, versions {dict(versions)}, {self.shed} shed"


def record(block: bytes, client: Client) -> None:
    fields = dict(
        line.split(": ", 1)
        for line in block.decode().splitlines()
        if line.startswith(("event: ", "data: "))
    )
    if fields.get("event") == "put":
        client.version = json.loads(fields["data"])["data"]["flags"]["a"]["version"]
    elif fields.get("event") == "patch":
        data = json.loads(fields["data"])
        if data["path"] == "/flags/a":
            client.version = data["data"]["version"]


def raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FILES_NEEDED:
        missing_prerequisite(f"{FILES_NEEDED} open files are needed, the hard limit is {hard}")
    if soft != resource.RLIM_INFINITY and soft < FILES_NEEDED:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FILES_NEEDED, hard))


def metric(server: ServerProcess, name: str) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    match = re.search(rf"^flagstaff_delivery_{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert match is not None, f"{name} not in /metrics"
    return float(match.group(1))


def sdk_version(api: httpx.Client, flag: str) -> int:
    """The version of `flag` in production as SDKs see it."""
    document = ok(api.get(f"/api/v2/flags/shop/{flag}"))
    return int(document["environments"]["production"]["version"])


async def test_a_storm_of_1000_dropped_streams_keeps_the_node_up_bounded_and_current(
    tmp_path: Path,
) -> None:
    raise_file_limit()
    limits = {"FLAGSTAFF_FULL_SENDS_PER_SECOND": str(FULL_SENDS_PER_SECOND)}
    server = ServerProcess(data_dir=tmp_path / "server", env=limits)
    with running(server), admin_client(server.url) as api:
        sdk_key = await asyncio.to_thread(create_project, api)
        await asyncio.to_thread(create_flag, api, "a")
        idle = server.rss()

        swarm = Swarm(server.port, sdk_key)
        tasks = [asyncio.create_task(swarm.run(client)) for client in swarm.clients]
        try:
            version = await asyncio.to_thread(sdk_version, api, "a")
            await eventually(
                lambda: swarm.all_current(version),
                within=DEADLINE,
                interval=0.05,
                what="every client connected",
                state=swarm.summary,
            )
            streams = metric(server, 'open_streams{protocol="v1"}')
            assert streams == CLIENTS
            connected = server.rss()
            assert connected - idle < CLIENTS * MEMORY_PER_STREAM

            for change in (switch_on, switch_off):
                swarm.drop_all()
                await asyncio.to_thread(change, api, "a")
                version = await asyncio.to_thread(sdk_version, api, "a")
                await eventually(
                    lambda v=version: swarm.all_current(v),
                    within=DEADLINE,
                    interval=0.05,
                    what=f"v{version}",
                    state=swarm.summary,
                )

            assert server.process is not None
            assert server.process.poll() is None
            assert swarm.shed > 0  # the storms were throttled, and still converged
            assert metric(server, 'sheds_total{reason="full_send_rate"}') > 0
            assert server.rss() - connected < CLIENTS * STORM_GROWTH_PER_STREAM
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
