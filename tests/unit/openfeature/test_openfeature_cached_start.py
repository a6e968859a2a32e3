"""A provider initialized while its client serves the disk cache with every endpoint down is
READY then at once STALE (not READY until the status next changes), evaluates the cached value,
and turns READY when the service answers again; the provider reads flags through the client's
public `flag(key)`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from delivery_support import flag
from flagstaff_core import decode_data
from flagstaff_sdk import Client, Config, DataSourceState, Timing
from flagstaff_sdk.cache import cache_path, write_cache
from flagstaff_sdk.merge import Holding
from flagstaff_sdk.openfeature import FlagstaffProvider
from openfeature import api
from openfeature.evaluation_context import EvaluationContext
from openfeature.event import EventDetails, ProviderEvent
from openfeature.provider import ProviderStatus
from support.deadlines import wait_until

SDK_KEY = "sdk-cached-start"
FAST = Timing(
    initial_retry_delay=0.05,
    max_retry_delay=0.1,
    poll_interval=0.05,
    connect_timeout=1.0,
    read_timeout=1.0,
)


class Service:
    """FDv1 polling that is down (503) until `up` is set; serves `color` at version 2 then."""

    def __init__(self) -> None:
        self.up = False

    def handle(self, request: httpx.Request) -> httpx.Response:
        if not self.up:
            return httpx.Response(503)
        item = flag("color", 2, variations=("red", "blue"), fallthrough=0)
        return httpx.Response(200, json={"flags": {"color": item}, "segments": {}})


def test_initialized_from_the_cache_the_provider_is_stale_until_the_service_answers(
    tmp_path: Path,
) -> None:
    cached = decode_data(
        {"flags": {"color": flag("color", 1, variations=("red", "blue"))}, "segments": {}}
    )
    write_cache(cache_path(tmp_path, SDK_KEY), Holding(data=cached), time.time() - 60)
    service = Service()
    client = Client(
        Config(
            SDK_KEY,
            base_uri="http://flags.test",
            stream=False,
            protocol="fdv1",
            cache_dir=tmp_path,
            timing=FAST,
            send_events=False,
            init_timeout=2.0,
            http_transport=httpx.MockTransport(service.handle),
        )
    )
    assert client.data_source_status().state is DataSourceState.INTERRUPTED
    seen: list[ProviderEvent] = []
    lock = threading.Lock()

    def record(event: ProviderEvent) -> Callable[[EventDetails], None]:
        def handler(details: EventDetails) -> None:
            with lock:
                seen.append(event)

        return handler

    handlers = [
        (event, record(event))
        for event in (ProviderEvent.PROVIDER_READY, ProviderEvent.PROVIDER_STALE)
    ]
    for event, handler in handlers:
        api.add_handler(event, handler)
    try:
        with lock:
            seen.clear()  # a handler added runs at once for the state the provider is in now
        api.set_provider_and_wait(FlagstaffProvider(client))
        of = api.get_client()
        wait_until(lambda: of.get_provider_status() == ProviderStatus.STALE, what="STALE")
        user = EvaluationContext("u1")
        details = of.get_string_details("color", "none", user)
        assert details.value == "blue"  # the cached flag, not the default
        assert details.flag_metadata["flagVersion"] == 1  # read through client.flag()

        service.up = True
        wait_until(lambda: of.get_provider_status() == ProviderStatus.READY, what="READY")
        wait_until(lambda: of.get_string_value("color", "none", user) == "red", what="new data")

        def last_seen() -> list[ProviderEvent]:
            with lock:  # the registry sets a status before it runs the handlers
                return list(seen)

        wait_until(lambda: last_seen()[-1:] == [ProviderEvent.PROVIDER_READY], what="handlers")
        assert last_seen()[:2] == [ProviderEvent.PROVIDER_READY, ProviderEvent.PROVIDER_STALE]
    finally:
        for event, handler in handlers:
            api.remove_handler(event, handler)
        api.shutdown()
        api.clear_providers()
