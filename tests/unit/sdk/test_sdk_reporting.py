"""What a client reports about itself: `event_stats()` from its event processor, stream attempts
in diagnostic `streamInits`, its data-source status in diagnostics (from the first stream attempt
to the closing report), and `flag(key)` (the flag as held now, for integrations)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from delivery_support import flag
from flagstaff_sdk import Client, Config, Context, Timing
from flagstaff_sdk.events import DropReason, EventOptions, sink_factory
from flagstaff_sdk.test_data import TestData
from support.deadlines import wait_until

USER = Context.create("u")
TIMING = Timing(
    initial_retry_delay=0.02,
    max_retry_delay=0.05,
    poll_fallback_after=30.0,
    initial_poll_after=30.0,
    connect_timeout=1.0,
    read_timeout=1.0,
)


class EventsEndpoint:
    """A synchronous httpx transport standing in for the events service (always 202)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.diagnostics: list[dict[str, Any]] = []
        self.bulk_events: list[dict[str, Any]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        with self._lock:
            if request.url.path.endswith("/diagnostic"):
                self.diagnostics.append(body)
            else:
                self.bulk_events.extend(body or [])
        return httpx.Response(202)

    def stream_inits(self) -> list[dict[str, Any]]:
        with self._lock:
            return [i for d in self.diagnostics for i in d.get("streamInits", [])]


def test_event_stats_come_from_the_processor_and_are_none_with_events_off() -> None:
    endpoint = EventsEndpoint()
    data = TestData()
    data.update(data.flag("f").variation_for_all(True))
    events = sink_factory(
        EventOptions(transport=httpx.MockTransport(endpoint.handle), diagnostic_opt_out=True)
    )
    client = Client(
        Config("sdk-stats", base_uri="http://events.test", data_source=data, event_sink=events)
    )
    assert client.bool_variation("f", USER, False) is True
    stats = client.event_stats()
    assert stats is not None
    assert stats.dropped_total == 0
    client.close()

    closed = client.event_stats()
    assert closed is not None
    assert closed.delivered_events >= 1  # the summary (and index) flushed on close
    assert closed.delivered_events == len(endpoint.bulk_events)
    client.variation("f", USER, False)  # after close: refused and counted, never sent
    after = client.event_stats()
    assert after is not None
    assert after.dropped[DropReason.CLOSED] == 1

    with Client(Config("sdk-off", data_source=TestData(), send_events=False)) as quiet:
        assert quiet.event_stats() is None


class StreamService:
    """FDv1 `/all`: answers the first `failures` attempts with 503, then a `put` and an open
    stream."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.attempts = 0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path != "/all":
            return httpx.Response(404)
        self.attempts += 1
        if self.attempts <= self.failures:
            return httpx.Response(503)
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=self._sse()
        )

    async def _sse(self) -> AsyncIterator[bytes]:
        put = {"path": "/", "data": {"flags": {"f": flag("f", 1)}, "segments": {}}}
        yield f"event: put\ndata: {json.dumps(put)}\n\n".encode()
        await asyncio.Event().wait()  # open and healthy until the client goes away


def test_stream_attempts_reach_diagnostic_stream_inits() -> None:
    endpoint = EventsEndpoint()
    service = StreamService(failures=1)
    events = sink_factory(
        EventOptions(transport=httpx.MockTransport(endpoint.handle), diagnostic_interval=0.05)
    )
    before_ms = int(time.time() * 1000)
    config = Config(
        "sdk-inits",
        base_uri="http://flags.test",
        protocol="fdv1",
        timing=TIMING,
        http_transport=httpx.MockTransport(service.handle),
        event_sink=events,
        init_timeout=5.0,
    )
    with Client(config) as client:
        wait_until(client.is_initialized, what="data from the stream")
        wait_until(lambda: len(endpoint.stream_inits()) >= 2, what="two stream inits reported")
        inits = endpoint.stream_inits()
    assert [i["failed"] for i in inits[:2]] == [True, False]
    for init in inits:
        assert init["timestamp"] >= before_ms
        assert 0 <= init["durationMillis"] < 10_000
    assert inits[1]["timestamp"] >= inits[0]["timestamp"]


def test_diagnostics_report_the_data_source_from_the_first_stream_attempt_until_closing() -> None:
    endpoint = EventsEndpoint()
    service = StreamService(failures=0)
    # a whole interval is far beyond the test: the first report must not wait for it
    events = sink_factory(
        EventOptions(transport=httpx.MockTransport(endpoint.handle), diagnostic_interval=900.0)
    )
    config = Config(
        "sdk-fleet",
        base_uri="http://flags.test",
        protocol="fdv1",
        timing=TIMING,
        http_transport=httpx.MockTransport(service.handle),
        event_sink=events,
        init_timeout=5.0,
    )
    with Client(config) as client:
        wait_until(client.is_initialized, what="data from the stream")

        def periodic() -> list[dict[str, Any]]:
            return [d for d in list(endpoint.diagnostics) if d["kind"] == "diagnostic"]

        (first,) = wait_until(periodic, what="the first periodic diagnostic")
        assert first["dataSource"]["state"] == "VALID"
        assert first["dataSource"]["source"] == "stream"
        assert first["dataSource"]["dataAgeMillis"] >= 0
        assert first["dataSource"]["stateSince"] <= first["creationDate"]
        assert [init["failed"] for init in first["streamInits"]] == [False]
        assert "closing" not in first
    last = endpoint.diagnostics[-1]
    assert (last["kind"], last["closing"], last["id"]) == ("diagnostic", True, first["id"])


def test_flag_is_the_flag_held_now_or_none() -> None:
    data = TestData()
    data.update(data.flag("f").variation_for_all(True))
    with Client(Config("sdk-flag", data_source=data, send_events=False)) as client:
        first = client.flag("f")
        assert first is not None
        assert first.key == "f"
        assert client.flag("missing") is None
        data.update(data.flag("f").variation_for_all(False))
        wait_until(lambda: client.flag("f") != first, what="the updated flag")
        updated = client.flag("f")
        assert updated is not None
        assert updated.version > first.version
