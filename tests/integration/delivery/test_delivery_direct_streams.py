"""Streams served on the connection itself (`delivery.connection`), over real sockets: the opening
payload and changes, disconnect bookkeeping, heartbeats and max age, FDv2 resume, the stream cap,
slow-client eviction, shutdown, and fallback to the ASGI app for everything else."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from delivery_support import (
    ENVIRONMENT,
    SDK_KEY,
    Outbox,
    RunningServer,
    environment,
    flag,
    memory_backend,
    read_events,
    serve,
)
from flagstaff_server.delivery import DeliveryConfig, Limits
from flagstaff_server.delivery.fanout import DirectStream
from support.deadlines import wait_until

AUTH = {"Authorization": SDK_KEY}


@contextmanager
def serve_direct(feed: Any, config: DeliveryConfig | None = None) -> Iterator[RunningServer]:
    """A uvicorn server whose HTTP protocol serves this node's streams directly, once current."""
    with serve(feed, config=config, direct=True) as running:
        wait_until(lambda: running.call(lambda: running.node.current), what="node current")
        yield running


def _seeded() -> tuple[Any, Outbox]:
    _store, feed, outbox = memory_backend()
    outbox.write("environment", ENVIRONMENT, environment())
    outbox.write("flag", "a", flag("a"))
    return feed, outbox


def _streams(server: RunningServer) -> list[str]:
    def kinds() -> list[str]:
        return [
            type(s).__name__
            for e in server.node.store.environments.values()
            for s in e.broadcaster.channels
        ]

    result: list[str] = server.call(kinds)
    return result


def _open(client: httpx.Client, path: str, **params: str) -> Any:
    return client.stream("GET", path, headers=AUTH, params=params, timeout=10)


def test_a_direct_stream_gets_the_put_then_changes_and_is_forgotten_on_disconnect() -> None:
    feed, outbox = _seeded()
    with serve_direct(feed) as server, httpx.Client(base_url=server.url) as client:
        with _open(client, "/all") as response:
            assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
            assert response.headers["x-accel-buffering"] == "no"
            assert response.headers["transfer-encoding"] == "chunked"
            # the connection ends with the stream, so no client may reuse it for another request
            assert response.headers["connection"] == "close"
            lines = response.iter_lines()
            assert next(lines).startswith("retry: ")
            [(_, put)] = read_events(lines, lambda name, _d: name == "put")
            assert list(put["data"]["flags"]) == ["a"]
            assert _streams(server) == [DirectStream.__name__]
            assert server.call(lambda: server.node.admission.open_streams) == 1
            outbox.write("flag", "a", flag("a", 2))
            [(_, patch)] = read_events(lines, lambda name, _d: name == "patch")
            assert (patch["path"], patch["data"]["version"]) == ("/flags/a", 2)
        wait_until(lambda: server.call(lambda: server.node.admission.open_streams) == 0)
        assert _streams(server) == []


def test_direct_streams_get_heartbeats_resume_with_a_basis_and_close_at_max_age() -> None:
    feed, outbox = _seeded()
    config = DeliveryConfig(
        heartbeat_seconds=0.05,
        tick_seconds=0.02,
        limits=Limits(max_connection_age_seconds=0.5, age_jitter=0.0),
    )
    with serve_direct(feed, config) as server, httpx.Client(base_url=server.url) as client:
        with _open(client, "/all") as response:
            lines = list(response.iter_lines())  # ends only when the server closes the stream
        assert "event: put" in lines
        assert ":" in lines
        with _open(client, "/sdk/stream") as response:
            first = read_events(response.iter_lines(), lambda n, _d: n == "payload-transferred")
        basis = first[-1][1]["state"]
        with _open(client, "/sdk/stream", basis=basis) as response:
            events = read_events(response.iter_lines(), lambda name, _d: name == "goodbye")
        assert events[0][1]["payloads"][0]["intentCode"] == "none"
        assert events[-1] == ("goodbye", {"reason": "max-age"})
        assert "put-object" not in [name for name, _data in events]
        counts = server.call(lambda: dict(server.node.admission.counts))
        assert counts["aged_out"] >= 2  # the /all stream and the resumed one
        assert counts["none_send"] == 1
    del outbox


def test_direct_streams_beyond_the_cap_get_503_and_other_requests_reach_the_app() -> None:
    feed, _outbox = _seeded()
    config = DeliveryConfig(limits=Limits(max_streams=1, retry_after_seconds=2))
    with (
        serve_direct(feed, config) as server,
        httpx.Client(base_url=server.url) as client,
        _open(client, "/all") as held,
    ):
        lines = held.iter_lines()
        read_events(lines, lambda name, _d: name == "put")
        refused = httpx.get(f"{server.url}/all", headers=AUTH)
        assert refused.status_code == 503
        assert refused.headers["content-type"] == "application/problem+json"
        assert 2 <= int(refused.headers["retry-after"]) <= 4
        assert server.call(lambda: server.node.admission.counts["stream_shed"]) == 1
        # polls and unknown keys are the ASGI app's, on the same port
        assert client.get("/sdk/latest-all", headers=AUTH).status_code == 200
        unknown = client.get("/all", headers={"Authorization": "sdk-unknown"})
        assert unknown.status_code == 401
        del lines


def test_a_direct_stream_that_stops_reading_is_evicted_and_others_keep_receiving() -> None:
    feed, outbox = _seeded()
    big = "x" * 200_000
    with (
        serve_direct(feed) as server,
        httpx.Client(base_url=server.url) as client,
        _open(client, "/all") as reader,
        socket.socket() as stuck,
    ):
        lines = reader.iter_lines()
        read_events(lines, lambda name, _d: name == "put")
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(("127.0.0.1", server.port))
        stuck.sendall(f"GET /all HTTP/1.1\r\nHost: x\r\nAuthorization: {SDK_KEY}\r\n\r\n".encode())
        wait_until(lambda: server.call(lambda: server.node.admission.open_streams) == 2)
        for version in range(2, 200):  # never read from `stuck`
            outbox.write("flag", "a", flag("a", version, variations=(big, "b")))
            event = read_events(lines, lambda name, _d: name == "patch")[-1]
            assert event[1]["data"]["version"] == version
            if server.call(lambda: server.node.admission.counts["evicted"]):
                break
        assert server.call(lambda: server.node.admission.counts["evicted"]) == 1
        wait_until(lambda: server.call(lambda: server.node.admission.open_streams) == 1)
        outbox.write("flag", "a", flag("a", 500))
        assert read_events(lines, lambda name, _d: name == "patch")[-1][1]["data"]["version"] == 500


def test_a_server_shutdown_ends_direct_streams_with_a_goodbye() -> None:
    feed, _outbox = _seeded()
    with serve_direct(feed) as server, httpx.Client(base_url=server.url) as client:
        with _open(client, "/sdk/stream") as response:
            lines = response.iter_lines()
            read_events(lines, lambda name, _d: name == "payload-transferred")
            server.server.should_exit = True
            events = read_events(lines, lambda name, _d: name == "goodbye")
        assert events[-1] == ("goodbye", {"reason": "shutdown"})
