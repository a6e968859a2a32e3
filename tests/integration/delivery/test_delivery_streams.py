"""Delivery streams over real sockets: FDv2 resume with a basis, heartbeats, maximum connection
age, the stream cap, slow-client eviction, restart from disk with the feed down, and a bounded
reconnect storm of raw SSE clients."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import httpx
import psutil
from delivery_support import (
    ENVIRONMENT,
    SDK_KEY,
    Outbox,
    RunningServer,
    UnreachableFeed,
    environment,
    flag,
    memory_backend,
    open_raw_stream,
    read_events,
    segment,
    serve,
)
from flagstaff_server.delivery import DeliveryConfig, Limits
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import eventually, wait_until

AUTH = {"Authorization": SDK_KEY}
STORM_SECONDS = 30.0
"""How long the reconnect storm may take to converge (a liveness bound, not a speed claim)."""


def _seeded() -> tuple[Any, Outbox]:
    _store, feed, outbox = memory_backend()
    outbox.write("environment", ENVIRONMENT, environment())
    outbox.write("flag", "a", flag("a"))
    outbox.write("segment", "s", segment("s"))
    return feed, outbox


def _current(server: RunningServer) -> None:
    wait_until(lambda: server.call(lambda: server.node.current), what="node current")


def _is_commit(name: str, _data: Any) -> bool:
    return name == "payload-transferred"


def _open(client: httpx.Client, path: str, **params: str) -> Any:
    return client.stream("GET", path, headers=AUTH, params=params, timeout=10)


def test_fdv2_resume_sends_nothing_when_current_and_only_the_missed_changes_when_behind() -> None:
    feed, outbox = _seeded()
    with serve(feed) as server, httpx.Client(base_url=server.url) as client:
        _current(server)
        with _open(client, "/sdk/stream") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            first = read_events(response.iter_lines(), _is_commit)
        assert first[0][1]["payloads"][0]["intentCode"] == "xfer-full"
        assert sorted(data["key"] for name, data in first if name == "put-object") == ["a", "s"]
        basis = first[-1][1]["state"]

        outbox.write("flag", "a", flag("a", 2))
        outbox.write("flag", "b", flag("b"))
        outbox.write("segment", "s", None, version=2)
        wait_until(lambda: server.call(lambda: server.node.position) == 6, what="3 changes")

        with _open(client, "/sdk/stream", basis=basis) as response:
            behind = read_events(response.iter_lines(), _is_commit)
        assert behind[0][1]["payloads"][0]["intentCode"] == "xfer-changes"
        assert [(name, data["key"], data["version"]) for name, data in behind[1:-1]] == [
            ("put-object", "a", 2),
            ("put-object", "b", 1),
            ("delete-object", "s", 2),
        ]
        current = behind[-1][1]["state"]

        with _open(client, "/sdk/stream", basis=current) as response:
            lines = response.iter_lines()
            [(_name, intent)] = read_events(lines, lambda name, _data: name == "server-intent")
            assert intent["payloads"][0]["intentCode"] == "none"
            outbox.write("flag", "c", flag("c"))
            after = read_events(lines, _is_commit)
        # The next thing after "none" is the new change: no payload was sent in between.
        assert [(name, data.get("key")) for name, data in after] == [
            ("put-object", "c"),
            ("payload-transferred", None),
        ]


def test_streams_get_heartbeats_a_retry_hint_and_close_cleanly_at_max_age() -> None:
    feed, _outbox = _seeded()
    config = DeliveryConfig(
        heartbeat_seconds=0.05,
        tick_seconds=0.02,
        retry_hint_ms=2000,
        limits=Limits(max_connection_age_seconds=0.5, age_jitter=0.0),
    )
    with serve(feed, config=config) as server, httpx.Client(base_url=server.url) as client:
        _current(server)
        with _open(client, "/all") as response:
            assert response.headers["x-accel-buffering"] == "no"
            assert response.headers["cache-control"] == "no-cache"
            assert response.headers["transfer-encoding"] == "chunked"
            lines = list(response.iter_lines())  # ends only when the server closes the stream
        assert lines[0].startswith("retry: ")
        assert 2000 <= int(lines[0].split(": ")[1]) <= 4000
        assert "event: put" in lines
        assert ":" in lines
        with _open(client, "/sdk/stream") as response:
            events = read_events(response.iter_lines(), lambda name, _d: name == "goodbye")
        assert events[-1] == ("goodbye", {"reason": "max-age"})
        counts = server.call(lambda: dict(server.node.admission.counts))
        assert counts["aged_out"] >= 2


def test_streams_beyond_the_cap_get_503_with_retry_after() -> None:
    feed, _outbox = _seeded()
    config = DeliveryConfig(limits=Limits(max_streams=1, retry_after_seconds=2))
    with serve(feed, config=config) as server, httpx.Client(base_url=server.url) as client:
        _current(server)
        with _open(client, "/all") as held:
            # keep the line iterator alive: dropping it would close the stream
            lines = held.iter_lines()
            read_events(lines, lambda name, _d: name == "put")
            refused = httpx.get(f"{server.url}/all", headers=AUTH)
            assert refused.status_code == 503
            assert 2 <= int(refused.headers["retry-after"]) <= 4
            del lines
        wait_until(lambda: server.call(lambda: server.node.admission.open_streams) == 0)
        with _open(client, "/sdk/stream") as again:
            assert again.status_code == 200


def test_a_client_that_stops_reading_is_evicted_and_others_keep_receiving() -> None:
    feed, outbox = _seeded()
    config = DeliveryConfig(channel_limit=4)
    big = "x" * 200_000
    with serve(feed, config=config) as server, httpx.Client(base_url=server.url) as client:
        _current(server)
        with _open(client, "/all") as reader:
            lines = reader.iter_lines()
            read_events(lines, lambda name, _d: name == "put")
            with _open(client, "/all") as stuck:
                assert stuck.status_code == 200  # and then never read
                for version in range(2, 80):
                    outbox.write("flag", "a", flag("a", version, variations=(big, "b")))
                    event = read_events(lines, lambda name, _d: name == "patch")[-1]
                    assert event[1]["data"]["version"] == version
                    if server.call(lambda: server.node.admission.counts["evicted"]):
                        break
                assert server.call(lambda: server.node.admission.counts["evicted"]) == 1


def test_a_restarted_node_serves_its_disk_snapshot_at_once_with_the_feed_down(
    tmp_path: Path,
) -> None:
    feed, outbox = _seeded()
    config = DeliveryConfig(data_dir=tmp_path, persist_delay_seconds=0.01)
    with serve(feed, config=config) as server:
        _current(server)
        outbox.write("flag", "a", flag("a", 2, variations=("off", "on-from-disk")))
        wait_until(lambda: server.call(lambda: server.node.position) == 4)
    # Stopping the server flushed the snapshot; the feed is now unreachable.
    with serve(UnreachableFeed(), config=config) as server:
        assert not server.call(lambda: server.node.current)
        ld = LDClient(
            Config(
                SDK_KEY,
                base_uri=server.url,
                stream_uri=server.url,
                events_uri=server.url,
                send_events=False,
                diagnostic_opt_out=True,
            ),
            start_wait=10,
        )
        try:
            assert ld.is_initialized()
            assert ld.variation("a", Context.create("u"), "default") == "on-from-disk"
        finally:
            ld.close()
        assert httpx.get(f"{server.url}/sdk/latest-all", headers=AUTH).status_code == 200


async def _sse_client(port: int, stop: asyncio.Event, seen: dict[int, int], index: int) -> None:
    """A raw SSE client that reconnects (honouring Retry-After) and records the version of flag
    "a" it holds."""
    while not stop.is_set():
        reader, writer, status, headers = await open_raw_stream(port, close=True)
        if b" 503 " in status:
            writer.close()
            await asyncio.sleep(float(headers["retry-after"]) * random.random())
            continue
        buffer = b""
        try:
            while not stop.is_set():
                chunk = await reader.read(65536)
                if not chunk:
                    break
                buffer += chunk
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    _record(block, seen, index)
        finally:
            writer.close()


def _record(block: bytes, seen: dict[int, int], index: int) -> None:
    text = block.decode(errors="replace")
    # chunk-size lines of the chunked encoding sit between events; keep only SSE fields
    fields = dict(
        line.split(": ", 1) for line in text.splitlines() if line.startswith(("event: ", "data: "))
    )
    if fields.get("event") == "put":
        seen[index] = json.loads(fields["data"])["data"]["flags"]["a"]["version"]
    elif fields.get("event") == "patch":
        data = json.loads(fields["data"])
        if data["path"] == "/flags/a":
            seen[index] = data["data"]["version"]


async def test_a_reconnect_storm_keeps_memory_bounded_and_every_client_gets_current_data() -> None:
    clients = 300
    feed, outbox = _seeded()
    config = DeliveryConfig(
        limits=Limits(full_sends_per_second=400, full_send_burst=100, retry_after_seconds=1)
    )
    process = psutil.Process()
    with serve(feed, config=config) as server:
        await asyncio.to_thread(_current, server)
        stop = asyncio.Event()
        seen: dict[int, int] = {}
        tasks = [
            asyncio.create_task(_sse_client(server.port, stop, seen, i)) for i in range(clients)
        ]
        await eventually(
            lambda: len(seen) == clients and set(seen.values()) == {1},
            within=STORM_SECONDS,
            interval=0.01,
            what="every client on version 1",
        )
        baseline = process.memory_info().rss
        for round_number in (2, 3):
            dropped = server.call(server.node.drop_streams)
            assert dropped == clients
            outbox.write("flag", "a", flag("a", round_number))
            await eventually(
                lambda v=round_number: set(seen.values()) == {v},
                within=STORM_SECONDS,
                interval=0.01,
                what=f"every client on version {round_number}",
            )
            await eventually(
                lambda: server.call(lambda: server.node.admission.open_streams) == clients,
                within=STORM_SECONDS,
                interval=0.01,
                what="every client's stream open again",
            )
        counts = server.call(lambda: dict(server.node.admission.counts))
        assert counts["full_send_shed"] > 0  # the storm was throttled, and still converged
        growth = process.memory_info().rss - baseline
        assert growth < 64 * 1024 * 1024
        stop.set()
        server.call(server.node.drop_streams)
        await asyncio.gather(*tasks)
