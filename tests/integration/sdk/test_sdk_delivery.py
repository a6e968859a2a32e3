"""The SDK against a real Flagstaff delivery node (uvicorn on loopback): initial data and change
propagation over FDv2 and FDv1, streaming and polling, a refused key, and listeners."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from delivery_support import flag, segment, serve
from flagstaff_sdk import (
    AsyncClient,
    Client,
    Context,
    DataSourceState,
    ErrorKind,
    FlagChange,
    FlagValueChange,
)
from sdk_support import SERVER, USER, current, seeded
from sdk_support import sdk_config as config
from support.deadlines import wait_until


@pytest.mark.parametrize(
    ("protocol", "stream"),
    [("auto", True), ("fdv1", True), ("auto", False), ("fdv1", False)],
    ids=["fdv2-stream", "fdv1-stream", "fdv2-poll", "fdv1-poll"],
)
def test_client_gets_initial_data_and_every_later_change(protocol: str, stream: bool) -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server:
        current(server)
        with Client(config(server.url, protocol=protocol, stream=stream)) as client:
            assert client.is_initialized()
            assert client.variation("a", USER, "default") == "on-1"
            assert client.variation("in-beta", USER, None) is True
            assert client.variation("in-beta", Context.create("user-2"), None) is False
            status = client.data_source_status()
            assert status.state is DataSourceState.VALID
            assert status.source == ("stream" if stream else "poll")

            outbox.write("flag", "a", flag("a", 2, variations=("off", "on-2")))
            outbox.write("segment", "beta", segment("beta", 2, included=("user-2",)))
            outbox.write("flag", "b", flag("b", variations=(0, 7)))
            wait_until(lambda: client.variation("b", USER, None) == 7, what="new flag b")
            wait_until(lambda: client.variation("a", USER, None) == "on-2", what="a v2")
            wait_until(
                lambda: client.variation("in-beta", Context.create("user-2"), None) is True,
                what="segment change",
            )
            assert client.variation("in-beta", USER, None) is False

            outbox.write("flag", "b", None, version=2)
            wait_until(
                lambda: (
                    client.variation_detail("b", USER, "gone").reason.error_kind
                    is ErrorKind.FLAG_NOT_FOUND
                ),
                what="deletion",
            )
            assert client.variation("b", USER, "gone") == "gone"


def test_listeners_hear_flag_changes_and_value_changes_for_a_context() -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server:
        current(server)
        with Client(config(server.url)) as client:
            changed: list[str] = []
            values: list[FlagValueChange] = []
            client.add_flag_change_listener(lambda change: changed.append(change.key))
            client.add_flag_value_listener("in-beta", Context.create("user-2"), values.append)
            outbox.write("segment", "beta", segment("beta", 2, included=("user-2",)))
            wait_until(lambda: len(values) == 1, what="value change")
            assert values == [FlagValueChange("in-beta", False, True)]
            # the flag did not change itself; it depends on the segment that did
            wait_until(lambda: "in-beta" in changed, what="dependent flag change")
            assert "a" not in changed
            assert FlagChange("x") == FlagChange("x")


def test_an_unknown_sdk_key_leaves_defaults_and_status_off_with_the_401() -> None:
    feed, _outbox = seeded()
    with serve(feed, config=SERVER) as server:
        current(server)
        with Client(config(server.url, sdk_key="sdk-unknown", init_timeout=3.0)) as client:
            detail = client.variation_detail("a", USER, "default")
            assert detail.value == "default"
            assert detail.reason.error_kind is ErrorKind.CLIENT_NOT_READY
            wait_until(lambda: client.data_source_status().state is DataSourceState.OFF)
            status = client.data_source_status()
            assert status.last_error is not None
            assert status.last_error.status == 401


async def test_async_client_shares_the_same_machinery() -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server:
        current(server)
        client = await AsyncClient.open(config(server.url))
        async with client:
            assert client.variation("a", USER, None) == "on-1"
            outbox.write("flag", "a", flag("a", 2, variations=("off", "async")))
            await asyncio.to_thread(
                wait_until, lambda: client.variation("a", USER, None) == "async"
            )
            await client.flush()


def test_the_disk_cache_is_written_and_a_later_client_starts_from_it(tmp_path: Path) -> None:
    feed, outbox = seeded()
    with serve(feed, config=SERVER) as server:
        current(server)
        with Client(config(server.url, cache_dir=tmp_path)) as client:
            outbox.write("flag", "a", flag("a", 2, variations=("off", "cached")))
            wait_until(lambda: client.variation("a", USER, None) == "cached")
        assert list(tmp_path.glob("flagstaff-*.json"))
    # the node is gone: the next client has only its cache
    with Client(config("http://127.0.0.1:9", cache_dir=tmp_path, init_timeout=3.0)) as client:
        assert client.variation("a", USER, None) == "cached"
        status = client.data_source_status()
        assert status.state is DataSourceState.INTERRUPTED
        assert status.data_age is not None
        assert status.last_error is not None
