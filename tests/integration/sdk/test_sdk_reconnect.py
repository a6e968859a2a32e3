"""The SDK resuming from a current FDv2 selector against real `flagstaff serve` processes: after a
restart of the server it streams from, and when started from an up-to-date disk cache, the
stream opens with intent `none`, and every later change reaches the SDK at once, without the
stream being dropped (reference §1.7: after `none` objects and a commit are a change set).

The SDK runs with its default timing, as an application's would: a change that made it drop
the stream would wait for the reconnect backoff, seconds after the restart's failed attempts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from flagstaff_sdk import Client, Config, Context, DataSourceState, DataSourceStatus
from support.deadlines import wait_until
from support.management import Keys, admin_client, create_flag, create_project, delete_flag, switch
from support.processes import ServeProcess, loopback_get, running

pytestmark = [pytest.mark.slow]

ADMIN = "reconnect-test-admin-token-0123456789"
USER = Context.create("user-1")
CHANGE_SECONDS = 3.0
"""A change reaches a connected SDK within a second; three leave room for a loaded machine (a
dropped stream waits out the reconnect backoff, which is longer)."""
RECONNECT_SECONDS = 60.0
"""The SDK's reconnect delays double while the server is down (1, 2, 4, 8 s, less jitter)."""


def _none_sends(server: ServeProcess) -> float:
    """How many FDv2 openings the server answered with intent `none` since it started."""
    text = loopback_get(f"{server.url}/metrics", timeout=5).text
    prefix = 'flagstaff_delivery_sends_total{payload="none"} '
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    assert lines, "no sends_total metric"
    return float(lines[0].removeprefix(prefix))


class StatusLog:
    """Every status the client's listeners heard, in order."""

    def __init__(self, client: Client) -> None:
        self.heard: list[DataSourceStatus] = []
        client.add_status_listener(self.heard.append)

    def saw(self, state: DataSourceState) -> Callable[[], bool]:
        return lambda: any(status.state is state for status in self.heard)


def _streaming(client: Client) -> Callable[[], bool]:
    def streaming() -> bool:
        status = client.data_source_status()
        return status.state is DataSourceState.VALID and status.source == "stream"

    return streaming


def _sdk_config(server: ServeProcess, keys: Keys, cache_dir: Path | None = None) -> Config:
    return Config(keys.sdk_key, base_uri=server.url, send_events=False, cache_dir=cache_dir)


@contextmanager
def _server(tmp_path: Path) -> Iterator[tuple[ServeProcess, httpx.Client, Keys]]:
    server = ServeProcess(data_dir=tmp_path / "server", admin_token=ADMIN)
    with running(server), admin_client(server.url, ADMIN) as api:
        keys = create_project(api)
        create_flag(api, "banner")
        yield server, api, keys


def _three_changes_arrive_while_the_stream_stays_up(
    client: Client, api: httpx.Client, log: StatusLog
) -> None:
    """Switch `banner` on, off, then delete it; each must arrive within CHANGE_SECONDS with no
    status other than VALID and no new error in between."""
    assert client.data_source_status().state is DataSourceState.VALID
    heard = len(log.heard)
    error = client.data_source_status().last_error
    changes: list[tuple[str, Callable[[], None], str]] = [
        ("switched on", lambda: switch(api, "banner", on=True), "on"),
        ("switched off", lambda: switch(api, "banner", on=False), "off"),
        ("deleted", lambda: delete_flag(api, "banner"), "default"),
    ]
    for what, change, expected in changes:
        change()
        wait_until(
            lambda expected=expected: client.variation("banner", USER, "default") == expected,
            timeout=CHANGE_SECONDS,
            what=f"the flag {what} to reach the SDK",
        )
    assert [s.state for s in log.heard[heard:] if s.state is not DataSourceState.VALID] == []
    status = client.data_source_status()
    assert status.state is DataSourceState.VALID
    assert status.last_error == error, "the stream failed on a change"


def test_after_a_server_restart_each_change_reaches_the_sdk_at_once(tmp_path: Path) -> None:
    with _server(tmp_path) as (server, api, keys), Client(_sdk_config(server, keys)) as client:
        assert client.variation("banner", USER, "default") == "off"
        log = StatusLog(client)
        server.stop()
        wait_until(log.saw(DataSourceState.INTERRUPTED), what="the SDK to see the server gone")
        server.start()
        # streaming again (a poll alongside may have made it VALID before)
        wait_until(_streaming(client), timeout=RECONNECT_SECONDS, what="the SDK to reconnect")
        # the reconnect sent the held selector and the restarted server found it current
        assert _none_sends(server) >= 1
        _three_changes_arrive_while_the_stream_stays_up(client, api, log)


def test_from_an_up_to_date_disk_cache_each_change_reaches_the_sdk_at_once(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    with _server(tmp_path) as (server, api, keys):
        with Client(_sdk_config(server, keys, cache)) as first:
            assert first.variation("banner", USER, "default") == "off"
        assert list(cache.glob("flagstaff-*.json")), "the first client wrote no cache"
        nones = _none_sends(server)
        with Client(_sdk_config(server, keys, cache)) as client:
            log = StatusLog(client)
            wait_until(_streaming(client), what="the SDK to connect")
            assert _none_sends(server) == nones + 1  # it resumed from the cached selector
            _three_changes_arrive_while_the_stream_stays_up(client, api, log)
