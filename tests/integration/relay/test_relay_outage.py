"""The relay with real processes: `flagstaff serve` as upstream, `flagstaff relay` in front, the
official LaunchDarkly Python SDK (9.18.4) behind it. The upstream is killed: the relay keeps
serving; the relay is restarted while the upstream is still down: it serves its disk store from
its first answer; the upstream returns: updates flow again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from ldclient import Context
from relay_support import CATCH_UP_SECONDS, RelayProcess, Upstream, admin_client, relay_config
from support.deadlines import wait_until
from support.management import create_flag, create_project, is_on, sdk_client, switch
from support.processes import running

pytestmark = [pytest.mark.slow]

USER = Context.create("user-1")


def _connection(relay: RelayProcess) -> dict[str, Any]:
    connection: dict[str, Any] = relay.status()["environments"]["production"]["connectionStatus"]
    return connection


def _state(relay: RelayProcess) -> str:
    state: str = _connection(relay)["state"]
    return state


def test_relay_outlives_its_upstream_restarts_from_its_store_and_resumes(tmp_path: Path) -> None:
    upstream = Upstream(data_dir=tmp_path / "upstream")
    with running(upstream), admin_client(upstream) as api:
        keys = create_project(api)
        create_flag(api, "banner")
        relay = RelayProcess(data_dir=tmp_path / "relay", config=relay_config([upstream.url], keys))
        with running(relay):
            sdk = sdk_client(relay.url, keys.sdk_key)
            try:
                assert sdk.is_initialized()
                assert sdk.variation("banner", USER, "x") == "off"
                switch(api, "banner", on=True)
                wait_until(
                    lambda: sdk.variation("banner", USER, "x") == "on",
                    timeout=CATCH_UP_SECONDS,
                    what="the change",
                )
                wait_until(lambda: _state(relay) == "VALID", timeout=CATCH_UP_SECONDS, what="VALID")

                upstream.kill()
                wait_until(
                    lambda: _state(relay) == "INTERRUPTED",
                    timeout=CATCH_UP_SECONDS,
                    what="INTERRUPTED",
                )
                # still serving: the connected SDK, a new streaming SDK and a poll
                assert sdk.variation("banner", USER, "x") == "on"
                late = sdk_client(relay.url, keys.sdk_key)
                try:
                    assert late.is_initialized()
                    assert late.variation("banner", USER, "x") == "on"
                finally:
                    late.close()
                assert is_on(relay.url, keys.sdk_key, "banner")
            finally:
                sdk.close()

        # restarted with the upstream still down: the first answer already has the data
        relay.launch()
        wait_until(lambda: _answers_at_all(relay), timeout=90, what="the relay's port")
        first = httpx.get(
            f"{relay.url}/sdk/latest-all", headers={"Authorization": keys.sdk_key}, timeout=10
        )
        assert first.status_code == 200, first.text
        assert first.json()["flags"]["banner"]["on"] is True
        try:
            status = relay.status()["environments"]["production"]
            assert status["connectionStatus"]["state"] == "INTERRUPTED"
            assert status["serving"] is True
            # the relay serves its store before its upstream thread's first attempt has failed
            wait_until(
                lambda: _connection(relay)["lastError"] is not None,
                timeout=CATCH_UP_SECONDS,
                what="the failed upstream attempt reported",
            )
            assert _connection(relay)["state"] == "INTERRUPTED"
            cold = sdk_client(relay.url, keys.sdk_key)
            try:
                assert cold.is_initialized()
                assert cold.variation("banner", USER, "x") == "on"

                upstream.start()  # same port, same database
                wait_until(lambda: _state(relay) == "VALID", timeout=60, what="reconnection")
                switch(api, "banner", on=False)
                wait_until(
                    lambda: not is_on(relay.url, keys.sdk_key, "banner"),
                    timeout=CATCH_UP_SECONDS,
                    what="resume",
                )
                wait_until(
                    lambda: cold.variation("banner", USER, "x") == "off",
                    timeout=CATCH_UP_SECONDS,
                    what="SDK update",
                )
            finally:
                cold.close()
        finally:
            relay.stop()


def _answers_at_all(relay: RelayProcess) -> bool:
    """The relay's port accepts requests (any status): the moment a load balancer would send
    SDKs to it."""
    assert relay.process is not None
    if relay.process.poll() is not None:
        raise AssertionError(f"relay exited: {relay.log()}")
    try:
        httpx.get(f"{relay.url}/status", timeout=2)
    except httpx.HTTPError:
        return False
    return True
