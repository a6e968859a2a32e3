"""Chaos between the SDK and real delivery nodes through the fault proxy: resets, stalls, closes
mid-stream, error statuses with Retry-After, blackholes and latency. The SDK reconnects, polls
alongside while streams are blocked (getting every update), returns to streaming, fails over to
a second endpoint and comes back, and cold-starts from its disk cache with every endpoint down."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from delivery_support import serve
from flagstaff_sdk import Client, Config, DataSourceState, Endpoint, ErrorKind
from flagstaff_server.gameday.fault_proxy import POLL_PATHS, STREAM_PATHS, Fault, FaultProxy
from flagstaff_server.services.ports import ChangeFeed
from sdk_support import FAST, SERVER, USER, current, sdk_config, seeded, set_flag_value
from support.deadlines import wait_until


@contextmanager
def proxied(feed: ChangeFeed) -> Iterator[FaultProxy]:
    """A delivery node behind a fault proxy."""
    with serve(feed, config=SERVER) as server, FaultProxy(current(server).port).running() as proxy:
        yield proxy


def _status_source(client: Client) -> str:
    return client.data_source_status().source


@pytest.mark.parametrize(
    "fault",
    [
        Fault("reset"),
        Fault("close", after_bytes=400),
        Fault("stall", after_bytes=400),
        Fault("status", status=503),
    ],
    ids=["reset", "close-mid-stream", "stall", "503"],
)
@pytest.mark.parametrize("protocol", ["auto", "fdv1"])
def test_streams_reconnect_after_a_fault_and_miss_no_update(fault: Fault, protocol: str) -> None:
    feed, outbox = seeded()
    with proxied(feed) as proxy, Client(sdk_config(proxy.url, protocol=protocol)) as client:
        assert client.variation("a", USER, None) == "on-1"
        connections = proxy.count(*STREAM_PATHS)
        proxy.set(fault, paths=STREAM_PATHS)
        value = set_flag_value(outbox, 2)  # published while the stream is broken
        wait_until(lambda: proxy.count(*STREAM_PATHS) > connections + 1, what="retries")
        proxy.heal()
        wait_until(lambda: client.variation("a", USER, None) == value, what="missed update")
        wait_until(lambda: _status_source(client) == "stream", what="streaming again")
        value = set_flag_value(outbox, 3)
        wait_until(lambda: client.variation("a", USER, None) == value, what="later update")


@pytest.mark.parametrize(
    "fault",
    [
        Fault("status", status=429, retry_after=1),
        Fault("blackhole"),
        Fault("stall", after_bytes=0),
        Fault("status", status=502),
    ],
    ids=["429-retry-after", "blackhole", "stall-before-headers", "502"],
)
def test_blocked_streams_fall_back_to_polling_then_return_to_streaming(fault: Fault) -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server, FaultProxy(current(server).port).running() as proxy:
        proxy.set(fault, paths=STREAM_PATHS)
        with Client(sdk_config(proxy.url, init_timeout=0.5)) as client:
            wait_until(lambda: _status_source(client) == "poll", what="polling alongside")
            assert client.data_source_status().state is DataSourceState.VALID
            assert client.variation("a", USER, None) == "on-1"
            for version in range(2, 6):
                value = set_flag_value(outbox, version)
                wait_until(lambda v=value: client.variation("a", USER, None) == v, what=value)
            polls = proxy.count(*POLL_PATHS)
            assert polls >= 4

            proxy.heal()
            wait_until(lambda: _status_source(client) == "stream", what="back to streaming")
            settled = proxy.count(*POLL_PATHS)
            value = set_flag_value(outbox, 6)
            wait_until(lambda: client.variation("a", USER, None) == value, what="streamed update")
            # polling stopped once the stream was VALID again (at most one poll in flight)
            assert proxy.count(*POLL_PATHS) <= settled + 1


def test_slow_polls_in_flight_never_roll_back_newer_stream_data() -> None:
    feed, outbox = seeded()
    with proxied(feed) as proxy, Client(sdk_config(proxy.url)) as client:
        history: list[str] = []
        client.add_flag_value_listener("a", USER, lambda change: history.append(change.new_value))
        # polls answer slowly: one sent before an update can land after the stream's copy
        proxy.set(Fault("latency", delay=0.3), paths=POLL_PATHS, drop=False)
        proxy.set(Fault("status", status=503), paths=STREAM_PATHS)
        wait_until(lambda: "poll" in _status_source(client), what="polling")
        polls = proxy.count(*POLL_PATHS)
        wait_until(lambda: proxy.count(*POLL_PATHS) > polls, what="a poll in flight")
        proxy.set(Fault(), paths=STREAM_PATHS)
        expected = [set_flag_value(outbox, version) for version in range(2, 8)]
        wait_until(lambda: client.variation("a", USER, None) == "v7", what="v7")
        wait_until(lambda: _status_source(client) == "stream", what="streaming only")
        last = set_flag_value(outbox, 8)
        wait_until(lambda: history[-1:] == [last], what="v8 heard")
        # every value heard is newer than the one before: nothing was rolled back
        versions = [int(value[1:]) for value in history]
        assert versions == sorted(set(versions))
        assert set(history) <= {*expected, last}


def test_latency_slows_but_does_not_break_delivery() -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server, FaultProxy(current(server).port).running() as proxy:
        proxy.set(Fault("latency", delay=0.05))
        with Client(sdk_config(proxy.url)) as client:
            assert client.variation("a", USER, None) == "on-1"
            value = set_flag_value(outbox, 2)
            wait_until(lambda: client.variation("a", USER, None) == value)
            assert _status_source(client) == "stream"


def test_fails_over_to_the_second_endpoint_and_returns_to_the_first() -> None:
    feed, outbox = seeded()
    with (
        serve(feed, config=SERVER) as first,
        serve(feed, config=SERVER) as second,
        FaultProxy(current(first).port).running() as proxy_a,
        FaultProxy(current(second).port).running() as proxy_b,
    ):
        endpoints = (Endpoint.at(proxy_a.url, name="a"), Endpoint.at(proxy_b.url, name="b"))
        with Client(sdk_config(endpoints=endpoints)) as client:
            assert client.data_source_status().endpoint == "a"
            proxy_a.set(Fault("reset"))
            wait_until(
                lambda: (
                    client.data_source_status().endpoint == "b"
                    and _status_source(client) == "stream"
                ),
                what="failover to b",
            )
            value = set_flag_value(outbox, 2)
            wait_until(lambda: client.variation("a", USER, None) == value, what="update via b")

            proxy_a.heal()
            wait_until(
                lambda: (
                    client.data_source_status().endpoint == "a"
                    and _status_source(client) == "stream"
                ),
                what="back on a",
            )
            streams_b = proxy_b.count(*STREAM_PATHS)
            value = set_flag_value(outbox, 3)
            wait_until(lambda: client.variation("a", USER, None) == value, what="update via a")
            assert proxy_b.count(*STREAM_PATHS) == streams_b


def test_cold_start_with_every_endpoint_down_evaluates_the_cached_value(tmp_path: Path) -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server:
        current(server)
        with Client(sdk_config(server.url, cache_dir=tmp_path)) as client:
            value = set_flag_value(outbox, 2)
            wait_until(lambda: client.variation("a", USER, None) == value)
    with (
        serve(feed, config=SERVER) as other,
        FaultProxy(other.port).running() as blackhole,
        FaultProxy(other.port).running() as refusing,
    ):
        blackhole.set(Fault("blackhole"))
        refusing.set(Fault("reset"))
        endpoints = (Endpoint.at(blackhole.url, name="a"), Endpoint.at(refusing.url, name="b"))
        config = sdk_config(endpoints=endpoints, cache_dir=tmp_path, init_timeout=1.0)
        with Client(config) as client:
            detail = client.variation_detail("a", USER, "default")
            assert detail.value == value
            assert detail.reason.error_kind is None
            status = client.data_source_status()
            assert status.state is DataSourceState.INTERRUPTED
            assert status.data_age is not None


def test_with_neither_network_nor_cache_evaluations_say_client_not_ready(tmp_path: Path) -> None:
    feed, _outbox = seeded()
    with serve(feed, config=SERVER) as server, FaultProxy(server.port).running() as proxy:
        proxy.set(Fault("reset"))
        config: Config = sdk_config(proxy.url, cache_dir=tmp_path, init_timeout=1.0)
        with Client(config) as client:
            detail = client.variation_detail("a", USER, "default")
            assert detail.value == "default"
            assert detail.reason.error_kind is ErrorKind.CLIENT_NOT_READY
            status = client.data_source_status()
            assert status.state is DataSourceState.INITIALIZING
            assert status.last_error is not None
            # and the client keeps trying: once the endpoint is back it has data
            proxy.heal()
            wait_until(lambda: client.variation("a", USER, None) == "on-1", what="recovery")


@pytest.mark.parametrize(
    "fault",
    [
        Fault("status", status=404),
        Fault("status", status=403, headers=(("X-LD-FD-Fallback", "true"),)),
    ],
    ids=["404", "fallback-header"],
)
def test_a_service_without_fdv2_gets_fdv1_requests(fault: Fault) -> None:
    feed, outbox = seeded()
    with proxied(feed) as proxy:
        proxy.set(fault, paths=("/sdk/stream", "/sdk/poll"))
        with Client(sdk_config(proxy.url)) as client:
            assert client.variation("a", USER, None) == "on-1"
            assert _status_source(client) == "stream"
            assert proxy.count("/all") >= 1
            value = set_flag_value(outbox, 2)
            wait_until(lambda: client.variation("a", USER, None) == value)
            # the fallback is remembered: FDv2 was asked once, not on every reconnect
            assert proxy.count("/sdk/stream") == 1


def test_with_streams_blackholed_from_the_start_the_polling_initializer_brings_data() -> None:
    feed, _outbox = seeded()
    timing = replace(FAST, initial_poll_after=0.2, poll_fallback_after=30.0)
    with proxied(feed) as proxy:
        proxy.set(Fault("blackhole"), paths=STREAM_PATHS)
        with Client(sdk_config(proxy.url, init_timeout=3.0, timing=timing)) as client:
            # the constructor returned with polled data, long before the stream fallback delay
            assert client.is_initialized()
            assert client.variation("a", USER, None) == "on-1"
            assert proxy.count(*POLL_PATHS) >= 1


def test_an_fdv2_reconnect_costs_a_delta_not_a_full_payload(tmp_path: Path) -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server, FaultProxy(current(server).port).running() as proxy:
        counts = server.node.admission.counts
        with Client(sdk_config(proxy.url, cache_dir=tmp_path)) as client:
            full_sends = server.call(lambda: counts["full_send"])
            proxy.set(Fault("reset"), paths=STREAM_PATHS)
            value = set_flag_value(outbox, 2)
            proxy.heal()
            wait_until(lambda: client.variation("a", USER, None) == value)
            wait_until(lambda: _status_source(client) == "stream")
            # the reconnect sent its selector as basis: the node answered with the one change
            assert server.call(lambda: counts["delta_send"] + counts["none_send"]) >= 1
            assert server.call(lambda: counts["full_send"]) == full_sends
        # a restart from the disk cache resumes from the cached selector too
        with Client(sdk_config(proxy.url, cache_dir=tmp_path)) as again:
            assert again.variation("a", USER, None) == value
            assert server.call(lambda: counts["full_send"]) == full_sends
