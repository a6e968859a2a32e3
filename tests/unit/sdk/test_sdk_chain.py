"""The data-source chain as a state machine, against a scripted service (httpx MockTransport):
streaming first, polling alongside while streams fail, back to streaming only, FDv1 fallback,
the refused-key regime, failover order, and what a client holds at each step."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from delivery_support import flag
from flagstaff_sdk import Client, Config, Context, DataSourceState, Endpoint, Timing
from flagstaff_sdk.errors import FallbackToFdv1, HttpStatusError
from flagstaff_sdk.network import check_response, retry_after_seconds
from support.deadlines import wait_until

USER = Context.create("u")
TIMING = Timing(
    initial_retry_delay=0.02,
    max_retry_delay=0.05,
    extended_retry_delay=0.05,
    extended_max_retry_delay=0.1,
    poll_interval=0.02,
    poll_fallback_after=0.1,
    probe_interval=0.05,
    connect_timeout=1.0,
    read_timeout=1.0,
)


class FakeService:
    """Answers SDK requests from a script the test changes as it goes; records every path."""

    def __init__(self, name: str = "a") -> None:
        self.name = name
        self.stream_status = 200
        self.poll_status = 200
        self.fdv2 = True
        self.version = 1
        self.requests: list[str] = []
        self._open: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def drop_streams(self) -> None:
        """End every open stream (as a server closing its connections)."""
        for loop, ended in self._open:
            loop.call_soon_threadsafe(ended.set)
        self._open = []

    def data(self) -> dict[str, Any]:
        item = flag("f", self.version, variations=("off", f"{self.name}{self.version}"))
        return {"flags": {"f": item}, "segments": {}}

    def count(self, *paths: str) -> int:
        return sum(1 for path in self.requests if path in paths)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.requests.append(path)
        if path in ("/sdk/stream", "/sdk/poll") and not self.fdv2:
            return httpx.Response(403, headers={"X-LD-FD-Fallback": "true"})
        if path in ("/all", "/sdk/stream"):
            if self.stream_status != 200:
                return httpx.Response(self.stream_status)
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=self._sse(path)
            )
        if path in ("/sdk/latest-all", "/sdk/poll"):
            if self.poll_status != 200:
                return httpx.Response(self.poll_status)
            body: Any = self.data() if path == "/sdk/latest-all" else self._fdv2_poll()
            return httpx.Response(200, json=body)
        return httpx.Response(404)

    def _fdv2_events(self) -> list[tuple[str, Any]]:
        intent = {"payloads": [{"id": "p", "target": 1, "intentCode": "xfer-full", "reason": ""}]}
        item = self.data()["flags"]["f"]
        put = {"kind": "flag", "key": "f", "version": self.version, "object": item}
        done = {"state": f"{self.name}-{self.version}", "version": self.version}
        return [("server-intent", intent), ("put-object", put), ("payload-transferred", done)]

    def _fdv2_poll(self) -> dict[str, Any]:
        return {"events": [{"event": name, "data": data} for name, data in self._fdv2_events()]}

    async def _sse(self, path: str) -> AsyncIterator[bytes]:
        if path == "/all":
            events = [("put", {"path": "/", "data": self.data()})]
        else:
            events = self._fdv2_events()
        for name, data in events:
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        ended = asyncio.Event()
        self._open.append((asyncio.get_running_loop(), ended))
        await ended.wait()  # an open, healthy stream until dropped


class Router:
    """One MockTransport in front of several fake services, by host."""

    def __init__(self, *services: FakeService) -> None:
        self.services = {service.name: service for service in services}

    async def handle(self, request: httpx.Request) -> httpx.Response:
        return await self.services[request.url.host].handle(request)


@contextmanager
def client_for(*services: FakeService, **extra: Any) -> Iterator[Client]:
    endpoints = tuple(Endpoint.at(f"http://{s.name}", name=s.name) for s in services)
    transport = httpx.MockTransport(Router(*services).handle)
    settings: dict[str, Any] = {
        "sdk_key": "k",
        "endpoints": endpoints,
        "send_events": False,
        "timing": TIMING,
        "http_transport": transport,
        "init_timeout": 2.0,
    }
    settings.update(extra)
    with Client(Config(**settings)) as client:
        yield client


def source(client: Client) -> str:
    return client.data_source_status().source


def test_streaming_first_then_polling_alongside_while_streams_fail_then_streaming_only() -> None:
    service = FakeService()
    with client_for(service) as client:
        assert source(client) == "stream"
        assert service.count("/sdk/poll") == 0  # no polling while the stream is VALID
        service.stream_status = 503
        service.version = 2
        service.requests.clear()
        service.drop_streams()
        wait_until(lambda: source(client) == "poll", what="polling alongside")
        assert client.data_source_status().state is DataSourceState.VALID
        wait_until(lambda: client.variation("f", USER, None) == "a2", what="polled data")
        service.stream_status = 200
        service.version = 3
        wait_until(lambda: source(client) == "stream", what="streaming again")
        assert client.variation("f", USER, None) == "a3"
        polls = service.count("/sdk/poll")
        service.version = 4
        service.drop_streams()
        wait_until(lambda: client.variation("f", USER, None) == "a4", what="new stream")
        assert service.count("/sdk/poll") <= polls + 1


def test_fdv1_fallback_is_per_endpoint_and_remembered() -> None:
    service = FakeService()
    service.fdv2 = False
    with client_for(service) as client:
        assert client.variation("f", USER, None) == "a1"
        assert service.requests[:2] == ["/sdk/stream", "/all"]
        service.version = 2
        service.drop_streams()
        wait_until(lambda: client.variation("f", USER, None) == "a2")
        assert service.count("/sdk/stream") == 1


def test_a_refused_key_turns_the_status_off_but_keeps_the_data_and_the_retries() -> None:
    service = FakeService()
    with client_for(service) as client:
        service.stream_status = 401
        service.poll_status = 401
        service.drop_streams()
        wait_until(lambda: client.data_source_status().state is DataSourceState.OFF)
        status = client.data_source_status()
        assert status.last_error is not None
        assert status.last_error.status == 401
        assert client.variation("f", USER, None) == "a1"
        tried = service.count("/sdk/stream")
        wait_until(lambda: service.count("/sdk/stream") > tried, what="a retry, however slow")
        service.stream_status = 200
        service.poll_status = 200
        wait_until(lambda: client.data_source_status().state is DataSourceState.VALID)


def test_failover_goes_down_the_list_and_returns_to_the_preferred_endpoint() -> None:
    a, b, c = FakeService("a"), FakeService("b"), FakeService("c")
    a.stream_status = a.poll_status = 503
    b.stream_status = b.poll_status = 503
    with client_for(a, b, c) as client:
        wait_until(lambda: client.data_source_status().endpoint == "c", what="third endpoint")
        wait_until(lambda: client.variation("f", USER, None) == "c1")
        b.stream_status = b.poll_status = 200
        wait_until(
            lambda: client.data_source_status().endpoint == "b" and source(client) == "stream",
            what="probe brings it back to b",
        )
        a.stream_status = a.poll_status = 200
        wait_until(
            lambda: client.data_source_status().endpoint == "a" and source(client) == "stream",
            what="and then to a",
        )
        assert client.variation("f", USER, None) == "a1"


def test_retry_after_is_read_as_seconds_or_an_http_date_and_statuses_are_classified() -> None:
    now = 1_700_000_000.0
    assert retry_after_seconds("7", now) == 7
    assert retry_after_seconds("Tue, 14 Nov 2023 22:13:40 GMT", now) == 20
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None
    refused = httpx.Response(429, headers={"Retry-After": "3"})
    with pytest.raises(HttpStatusError) as caught:
        check_response(refused, fdv2=False, auto=False, now=now)
    assert (caught.value.retry_after, caught.value.recoverable) == (3, True)
    with pytest.raises(HttpStatusError) as unauthorized:
        check_response(httpx.Response(401), fdv2=True, auto=True, now=now)
    assert not unauthorized.value.recoverable
    with pytest.raises(FallbackToFdv1):
        check_response(httpx.Response(404), fdv2=True, auto=True, now=now)
    with pytest.raises(HttpStatusError):
        check_response(httpx.Response(404), fdv2=True, auto=False, now=now)
    check_response(httpx.Response(304), fdv2=False, auto=True, now=now)


def test_a_bootstrap_file_serves_until_the_network_answers(tmp_path: Path) -> None:
    bootstrap = tmp_path / "bootstrap.json"
    bootstrap.write_text(json.dumps({"flagValues": {"f": "from-file"}}))
    service = FakeService()
    service.stream_status = service.poll_status = 503
    with client_for(service, bootstrap_file=bootstrap, init_timeout=0.3) as client:
        assert client.variation("f", USER, None) == "from-file"
        assert client.data_source_status().state is DataSourceState.INTERRUPTED
        service.stream_status = service.poll_status = 200
        wait_until(lambda: client.variation("f", USER, None) == "a1", what="network data")
        wait_until(lambda: client.data_source_status().state is DataSourceState.VALID)
