"""Provider status follows the client's data source over real loopback HTTP (FDv1 polling):
INTERRUPTED -> STALE, OFF (SDK key refused) -> ERROR, VALID again -> READY, and a changed flag
-> CONFIGURATION_CHANGED, as seen by OpenFeature's own status and event handlers."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from flagstaff_sdk import Client, Config, Timing
from flagstaff_sdk.openfeature import FlagstaffProvider
from openfeature import api
from openfeature.evaluation_context import EvaluationContext
from openfeature.event import EventDetails, ProviderEvent
from openfeature.provider import ProviderStatus
from support.deadlines import wait_until
from support.threaded_servers import serve_http

FAST = Timing(
    initial_retry_delay=0.05,
    max_retry_delay=0.1,
    extended_retry_delay=0.1,
    extended_max_retry_delay=0.2,
    poll_interval=0.05,
    connect_timeout=1.0,
    read_timeout=1.0,
)


class PollService:
    """`GET /sdk/latest-all` answering with the current data, or the status it is told to."""

    def __init__(self) -> None:
        self.status = 200
        self.version = 1
        self.url = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                status = service.status
                body = json.dumps(service.data()).encode() if status == 200 else b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def data(self) -> dict[str, Any]:
        flag = {
            "key": "color",
            "version": self.version,
            "on": True,
            "variations": ["red", "blue"],
            "offVariation": 0,
            "fallthrough": {"variation": self.version % 2},
            "salt": "color",
        }
        return {"flags": {"color": flag}, "segments": {}}


@pytest.fixture
def service() -> Iterator[PollService]:
    polled = PollService()
    with serve_http(polled.handler()) as server:
        polled.url = server.url
        yield polled


def test_provider_status_follows_the_data_source(service: PollService) -> None:
    client = Client(
        Config(
            sdk_key="sdk-status",
            base_uri=service.url,
            stream=False,
            protocol="fdv1",
            timing=FAST,
            send_events=False,
        )
    )
    seen: list[tuple[ProviderEvent, EventDetails]] = []
    lock = threading.Lock()

    def record(event: ProviderEvent) -> Callable[[EventDetails], None]:
        def handler(details: EventDetails) -> None:
            with lock:
                seen.append((event, details))

        return handler

    api.set_provider_and_wait(FlagstaffProvider(client))
    of = api.get_client()
    for event in ProviderEvent:
        of.add_handler(event, record(event))
    user = EvaluationContext("u1")
    try:

        def status_is(status: ProviderStatus) -> Callable[[], bool]:
            return lambda: of.get_provider_status() == status

        assert of.get_provider_status() == ProviderStatus.READY
        assert of.get_string_value("color", "none", user) == "blue"

        service.status = 503
        wait_until(status_is(ProviderStatus.STALE), what="STALE while polls fail")
        assert of.get_string_value("color", "none", user) == "blue"  # still evaluating

        service.status = 200
        wait_until(status_is(ProviderStatus.READY), what="READY when polls work again")

        service.status = 401
        wait_until(status_is(ProviderStatus.ERROR), what="ERROR when the key is refused")

        service.status = 200
        wait_until(status_is(ProviderStatus.READY), what="READY after the refusal ends")

        service.version = 2
        wait_until(
            lambda: of.get_string_value("color", "none", user) == "red", what="new flag data"
        )

        def kinds() -> list[ProviderEvent]:
            with lock:
                return [event for event, _ in seen]

        wait_until(
            lambda: ProviderEvent.PROVIDER_CONFIGURATION_CHANGED in kinds(),
            what="configuration changed",
        )
        with lock:
            changed = [d for e, d in seen if e == ProviderEvent.PROVIDER_CONFIGURATION_CHANGED]
            order = [e for e, _ in seen if e != ProviderEvent.PROVIDER_CONFIGURATION_CHANGED]
        assert changed[0].flags_changed == ["color"]
        expected = [
            ProviderEvent.PROVIDER_READY,  # run at once: the provider was READY when added
            ProviderEvent.PROVIDER_STALE,
            ProviderEvent.PROVIDER_READY,
            ProviderEvent.PROVIDER_ERROR,
            ProviderEvent.PROVIDER_READY,
        ]
        # in this order; the client may pass through INTERRUPTED (STALE) on its way from OFF
        # back to VALID within one poll, so extra STALE events are allowed
        remaining = iter(order)
        assert all(any(event == e for e in remaining) for event in expected), order
        assert set(order) <= set(expected)
    finally:
        api.clear_providers()
