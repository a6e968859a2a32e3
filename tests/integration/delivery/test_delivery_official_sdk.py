"""The official LaunchDarkly Python server SDK 9.18.4 against a delivery node over real sockets:
FDv1 streaming, FDv1 polling and FDv2 initialise, evaluate, and see changes and deletions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from delivery_support import (
    ENVIRONMENT,
    PROJECT,
    SDK_KEY,
    Outbox,
    RunningServer,
    environment,
    flag,
    memory_backend,
    segment,
    segment_rule_flag,
    serve,
)
from ldclient import Context, datasystem
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until

USER = Context.create("user-1")


@pytest.fixture
def running() -> Iterator[tuple[RunningServer, Outbox]]:
    _store, feed, outbox = memory_backend()
    outbox.write("environment", ENVIRONMENT, environment())
    outbox.write("flag", "banner", flag("banner", 1, variations=("old", "new"), fallthrough=0))
    outbox.write("segment", "beta", segment("beta", 1))
    outbox.write("flag", "beta-only", segment_rule_flag("beta-only", "beta"))
    with serve(feed) as server:
        wait_until(lambda: server.call(lambda: server.node.current), what="node current")
        yield server, outbox


def _client(server: RunningServer, **options: Any) -> LDClient:
    config = Config(
        SDK_KEY,
        base_uri=server.url,
        stream_uri=server.url,
        events_uri=server.url,
        send_events=False,
        diagnostic_opt_out=True,
        **options,
    )
    return LDClient(config=config, start_wait=10)


def _sees_changes(client: LDClient, outbox: Outbox) -> None:
    assert client.is_initialized()
    assert client.variation("banner", USER, "default") == "old"
    assert client.variation("beta-only", USER, "default") is False

    outbox.write("flag", "banner", flag("banner", 2, variations=("old", "new"), fallthrough=1))
    wait_until(lambda: client.variation("banner", USER, "default") == "new", what="patch")

    outbox.write("segment", "beta", segment("beta", 2, included=("user-1",)))
    wait_until(lambda: client.variation("beta-only", USER, "default") is True, what="segment")

    outbox.write("flag", "banner", None, version=3)
    wait_until(lambda: client.variation("banner", USER, "default") == "default", what="delete")


def test_fdv1_streaming_sdk_initialises_and_follows_changes(
    running: tuple[RunningServer, Outbox],
) -> None:
    server, outbox = running
    client = _client(server)
    try:
        _sees_changes(client, outbox)
    finally:
        client.close()
    assert server.call(lambda: server.node.admission.counts["stream_v1"]) >= 1


def test_fdv2_sdk_initialises_and_follows_changes(running: tuple[RunningServer, Outbox]) -> None:
    server, outbox = running
    client = _client(server, datasystem_config=datasystem.default().build())
    try:
        _sees_changes(client, outbox)
    finally:
        client.close()
    counts = server.call(lambda: dict(server.node.admission.counts))
    assert counts["stream_v2"] >= 1
    assert counts.get("stream_v1", 0) == 0


def test_fdv1_polling_sdk_initialises_and_revalidates_with_etag(
    running: tuple[RunningServer, Outbox],
) -> None:
    server, outbox = running
    client = _client(server, stream=False)
    try:
        assert client.is_initialized()
        assert client.variation("banner", USER, "default") == "old"
    finally:
        client.close()
    # The SDK polls every 30 s at the soonest; its revalidation request is made here directly.
    first = httpx.get(f"{server.url}/sdk/latest-all", headers={"Authorization": SDK_KEY})
    assert first.status_code == 200
    again = httpx.get(
        f"{server.url}/sdk/latest-all",
        headers={"Authorization": SDK_KEY, "If-None-Match": first.headers["etag"]},
    )
    assert again.status_code == 304
    outbox.write("flag", "banner", flag("banner", 2, variations=("old", "new"), fallthrough=1))
    wait_until(
        lambda: (
            httpx.get(
                f"{server.url}/sdk/latest-all",
                headers={"Authorization": SDK_KEY, "If-None-Match": first.headers["etag"]},
            ).status_code
            == 200
        ),
        what="a new etag",
    )
    second = _client(server, stream=False)
    try:
        assert second.variation("banner", USER, "default") == "new"
    finally:
        second.close()


def test_project_and_environment_labels_are_in_metrics(
    running: tuple[RunningServer, Outbox],
) -> None:
    server, _outbox = running
    text = httpx.get(f"{server.url}/metrics").text
    assert f'environment_seq{{project="{PROJECT}",environment="{ENVIRONMENT}"}} 4' in text
