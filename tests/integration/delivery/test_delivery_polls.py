"""Server-side polls (`/sdk/latest-all`, FDv2 `/sdk/poll`) over real sockets, on both paths: the
ASGI route and the connection that answers them without an ASGI task (`delivery.connection`).
Both give the same answers (`delivery.polling`): ETag and 304, gzip, the environment header,
FDv2 basis handling, full-payload shedding with Retry-After, and 401 for unknown keys. On the
direct path the ASGI handlers are made to fail, so a good answer proves the connection gave it."""

from __future__ import annotations

import gzip
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import orjson
import pytest
from delivery_support import (
    ENVIRONMENT,
    SDK_KEY,
    RunningServer,
    environment,
    flag,
    memory_backend,
    serve,
)
from flagstaff_server.delivery import DeliveryConfig, Limits
from flagstaff_server.delivery.asgi import DeliveryApp
from support.deadlines import wait_until

AUTH = {"Authorization": SDK_KEY}
PATHS = pytest.mark.parametrize("direct", [True, False], ids=["connection", "asgi"])


@contextmanager
def _serving(
    monkeypatch: pytest.MonkeyPatch,
    direct: bool,
    config: DeliveryConfig | None = None,
    **uvicorn_options: Any,
) -> Iterator[tuple[RunningServer, httpx.Client]]:
    if direct:

        async def not_here(*args: Any) -> None:
            raise AssertionError("a poll for a served key reached the ASGI app")

        monkeypatch.setattr(DeliveryApp, "_latest_all", not_here)
        monkeypatch.setattr(DeliveryApp, "_poll", not_here)
    _store, feed, outbox = memory_backend()
    outbox.write("environment", ENVIRONMENT, environment())
    outbox.write("flag", "a", flag("a"))
    with serve(feed, config=config, direct=direct, **uvicorn_options) as server:
        wait_until(lambda: server.call(lambda: server.node.current), what="node current")
        with httpx.Client(base_url=server.url, timeout=10) as client:
            yield server, client


@PATHS
def test_latest_all_has_an_etag_answers_304_and_gzips_when_asked(
    monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    with _serving(monkeypatch, direct) as (server, client):
        first = client.get("/sdk/latest-all", headers=AUTH)
        assert first.status_code == 200
        assert first.headers["content-type"] == "application/json"
        assert first.headers["vary"] == "accept-encoding"
        assert first.headers["x-ld-envid"] == "0" * 24
        assert first.json()["flags"] == {"a": flag("a")}
        etag = first.headers["etag"]
        again = client.get("/sdk/latest-all", headers={**AUTH, "If-None-Match": f"W/{etag}"})
        assert again.status_code == 304
        assert again.headers["etag"] == etag
        assert again.content == b""
        with client.stream(
            "GET", "/sdk/latest-all", headers={**AUTH, "Accept-Encoding": "gzip"}
        ) as raw:
            assert raw.headers["content-encoding"] == "gzip"
            body = b"".join(raw.iter_raw())
        assert orjson.loads(gzip.decompress(body)) == first.json()
        counts = server.call(lambda: dict(server.node.admission.counts))
        assert counts["not_modified"] == 1


@PATHS
def test_fdv2_poll_answers_a_current_basis_with_intent_none(
    monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    with _serving(monkeypatch, direct) as (_server, client):
        full = client.get("/sdk/poll", headers=AUTH)
        events = full.json()["events"]
        assert events[0]["data"]["payloads"][0]["intentCode"] == "xfer-full"
        state = events[-1]["data"]["state"]
        current = client.get("/sdk/poll", params={"basis": state}, headers=AUTH).json()
        assert [e["data"]["payloads"][0]["intentCode"] for e in current["events"]] == ["none"]
        cached = client.get("/sdk/poll", headers={**AUTH, "If-None-Match": full.headers["etag"]})
        assert cached.status_code == 304


@PATHS
def test_full_payloads_beyond_the_rate_get_503_with_retry_after_and_304s_pass(
    monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    config = DeliveryConfig(limits=Limits(full_sends_per_second=0.001, full_send_burst=1))
    with _serving(monkeypatch, direct, config) as (_server, client):
        first = client.get("/sdk/latest-all", headers=AUTH)
        assert first.status_code == 200
        shed = client.get("/sdk/poll", headers=AUTH)
        assert shed.status_code == 503
        assert shed.headers["content-type"] == "application/problem+json"
        assert int(shed.headers["retry-after"]) >= 1
        assert shed.json()["code"] == "service_unavailable"
        cached = client.get(
            "/sdk/latest-all", headers={**AUTH, "If-None-Match": first.headers["etag"]}
        )
        assert cached.status_code == 304
        assert 'payload="not_modified"} 1' in client.get("/metrics").text


@PATHS
def test_unknown_or_missing_keys_get_401_from_the_app(
    monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    with _serving(monkeypatch, direct) as (_server, client):
        unknown = client.get("/sdk/latest-all", headers={"Authorization": "sdk-nope"})
        assert unknown.status_code == 401
        assert unknown.json()["code"] == "unauthorized"
        assert client.get("/sdk/poll").status_code == 401
        # keep-alive survives answers written on the connection
        assert client.get("/sdk/latest-all", headers=AUTH).status_code == 200
        assert client.get("/sdk/latest-all", headers=AUTH).status_code == 200


def _read_answers(connection: socket.socket, count: int) -> bytes:
    """Read until `count` whole answers (by content-length) have arrived."""
    received = b""
    while True:
        heads = list(re.finditer(rb"HTTP/1\.1 (\d{3}) [^\r]*\r\n(.*?)\r\n\r\n", received, re.S))
        if len(heads) >= count:
            last = heads[count - 1]
            length = re.search(rb"content-length: (\d+)", last.group(2))
            if len(received) >= last.end() + (int(length.group(1)) if length else 0):
                return received
        chunk = connection.recv(65536)
        assert chunk, f"the connection closed after {received[:300]!r}"
        received += chunk


def test_pipelined_polls_are_answered_in_order_and_an_idle_connection_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with _serving(monkeypatch, True, timeout_keep_alive=1) as (server, client):
        etag = client.get("/sdk/latest-all", headers=AUTH).headers["etag"]
        base = f"Host: x\r\nAuthorization: {SDK_KEY}\r\n"
        requests = (
            f"GET /sdk/latest-all HTTP/1.1\r\n{base}\r\n"
            f"GET /sdk/latest-all HTTP/1.1\r\n{base}If-None-Match: {etag}\r\n\r\n"
            f"GET /sdk/poll HTTP/1.1\r\n{base}\r\n"
        )
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
            connection.sendall(requests.encode())  # one write: parsed in one go
            received = _read_answers(connection, 3)
            assert re.findall(rb"HTTP/1\.1 (\d{3}) ", received) == [b"200", b"304", b"200"]
            assert b'"intentCode":"xfer-full"' in received
            # kept alive after answers written on the connection, and closed by the server once
            # idle for the keep-alive timeout after its last answer
            connection.sendall(f"GET /sdk/latest-all HTTP/1.1\r\n{base}\r\n".encode())
            _read_answers(connection, 1)
            assert connection.recv(65536) == b""  # EOF (the 10 s socket timeout would raise)
