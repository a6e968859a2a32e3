"""The relay across a restart of its upstream (real `flagstaff serve` and `flagstaff relay`
processes): its upstream connection, the SDK's data system, resumes from the held FDv2 selector
(intent `none`), and every later change reaches what the relay serves at once, without the
connection being dropped. The relay runs with the SDK's default upstream timing, as deployed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from relay_support import CATCH_UP_SECONDS, RelayProcess, Upstream, admin_client, relay_config
from support.deadlines import wait_until
from support.management import create_flag, create_project, delete_flag, switch
from support.processes import loopback_get, running

pytestmark = [pytest.mark.slow]

CHANGE_SECONDS = 3.0
"""A change reaches the relay within a second; three leave room for a loaded machine (a dropped
upstream stream waits out the reconnect backoff, which is longer)."""
RECONNECT_SECONDS = 60.0
"""The reconnect delays double while the upstream is down (1, 2, 4, 8 s, less jitter)."""


def _connection(relay: RelayProcess) -> dict[str, Any]:
    connection: dict[str, Any] = relay.status()["environments"]["production"]["connectionStatus"]
    return connection


def _upstream_source(relay: RelayProcess) -> str:
    source: str = relay.status()["environments"]["production"]["upstreamSource"]
    return source


def _none_sends(server: Upstream) -> float:
    text = loopback_get(f"{server.url}/metrics", timeout=5).text
    prefix = 'flagstaff_delivery_sends_total{payload="none"} '
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    assert lines, "no sends_total metric"
    return float(lines[0].removeprefix(prefix))


def test_after_an_upstream_restart_each_change_reaches_the_relay_at_once(tmp_path: Path) -> None:
    upstream = Upstream(data_dir=tmp_path / "upstream")
    with running(upstream), admin_client(upstream) as api:
        keys = create_project(api)
        create_flag(api, "banner")
        config = relay_config([upstream.url], keys, upstream_timing="")
        relay = RelayProcess(data_dir=tmp_path / "relay", config=config)
        auth = {"Authorization": keys.sdk_key}
        with running(relay), httpx.Client(base_url=relay.url, headers=auth, timeout=5) as sdk:

            def banner() -> Any:
                response = sdk.get("/sdk/latest-all")
                assert response.status_code == 200, response.text
                return response.json()["flags"].get("banner")

            wait_until(lambda: banner() is not None, timeout=CATCH_UP_SECONDS, what="the flag")
            upstream.stop()
            wait_until(
                lambda: _connection(relay)["state"] == "INTERRUPTED",
                timeout=CATCH_UP_SECONDS,
                what="the relay to see its upstream gone",
            )
            upstream.start()
            # streaming again (a poll alongside may have made it VALID before)
            wait_until(
                lambda: _upstream_source(relay) == "stream",
                timeout=RECONNECT_SECONDS,
                what="the relay to stream from its upstream again",
            )
            assert _connection(relay)["state"] == "VALID"
            # the reconnect sent the held selector and the restarted upstream found it current
            assert _none_sends(upstream) >= 1
            error = _connection(relay)["lastError"]

            changes: list[tuple[str, Callable[[], None], Callable[[], bool]]] = [
                ("on", lambda: switch(api, "banner", on=True), lambda: banner()["on"]),
                ("off", lambda: switch(api, "banner", on=False), lambda: not banner()["on"]),
                ("deleted", lambda: delete_flag(api, "banner"), lambda: banner() is None),
            ]
            for what, change, arrived in changes:
                change()
                wait_until(arrived, timeout=CHANGE_SECONDS, what=f"the flag {what} at the relay")
            connection = _connection(relay)
            assert connection["state"] == "VALID"
            assert connection["lastError"] == error, "the upstream stream failed on a change"
