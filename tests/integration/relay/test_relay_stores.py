"""The relay's stores with real processes: a LaunchDarkly Python SDK in daemon mode reads the
relay's Redis (LaunchDarkly's layout) and follows a change made upstream; the relay repopulates
its prefix after the keys are deleted (a flush or a Redis restart); offline mode serves a data
file and picks up a replacement."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from delivery_support import flag
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from ldclient.feature_store import CacheConfig
from ldclient.integrations import Redis
from relay_support import CATCH_UP_SECONDS, RelayProcess, Upstream, admin_client, relay_config
from support.deadlines import wait_until
from support.management import (
    Keys,
    create_flag,
    create_project,
    is_on,
    sdk_client,
    served_flags,
    switch,
)
from support.processes import running
from support.services import REDIS_URL, redis_client

pytestmark = [pytest.mark.slow]

USER = Context.create("user-1")


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A prefix of this test's own on the shared Redis; its keys are deleted afterwards."""
    client = redis_client()
    prefix = f"flagstaff-relay-test-{secrets.token_hex(6)}"
    try:
        yield prefix
    finally:
        keys = list(client.scan_iter(f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        client.close()


def test_daemon_mode_sdk_reads_the_relays_redis_and_a_deleted_prefix_is_repopulated(
    tmp_path: Path, redis_prefix: str
) -> None:
    upstream = Upstream(data_dir=tmp_path / "upstream")
    with running(upstream), admin_client(upstream) as api:
        keys = create_project(api)
        create_flag(api, "banner")
        extra = f'[redis]\nurl = "{REDIS_URL}"\nprefix = "{redis_prefix}"\ncheck_seconds = 0.2\n'
        relay = RelayProcess(
            data_dir=tmp_path / "relay", config=relay_config([upstream.url], keys) + extra
        )
        client = redis.Redis.from_url(REDIS_URL)
        with running(relay):
            wait_until(
                lambda: client.exists(f"{redis_prefix}:$inited") == 1,
                timeout=CATCH_UP_SECONDS,
                what="$inited",
            )
            store = Redis.new_feature_store(
                url=REDIS_URL, prefix=redis_prefix, caching=CacheConfig.disabled()
            )
            config = Config(
                keys.sdk_key,
                use_ldd=True,
                feature_store=store,
                send_events=False,
                diagnostic_opt_out=True,
            )
            daemon = LDClient(config=config, start_wait=10)
            try:
                assert daemon.is_initialized()
                assert daemon.variation("banner", USER, "x") == "off"
                switch(api, "banner", on=True)
                wait_until(
                    lambda: daemon.variation("banner", USER, "x") == "on",
                    timeout=CATCH_UP_SECONDS,
                    what="the change",
                )
                stored = json.loads(client.hget(f"{redis_prefix}:features", "banner") or b"{}")
                assert stored["on"] is True
                assert stored == served_flags(relay.url, keys.sdk_key)["banner"]

                client.delete(*client.scan_iter(f"{redis_prefix}:*"))
                wait_until(
                    lambda: (
                        client.exists(f"{redis_prefix}:$inited")
                        and client.hexists(f"{redis_prefix}:features", "banner")
                    ),
                    timeout=CATCH_UP_SECONDS,
                    what="repopulation",
                )
                fresh = LDClient(config=config, start_wait=10)
                try:
                    assert fresh.is_initialized()
                    assert fresh.variation("banner", USER, "x") == "on"
                finally:
                    fresh.close()
                assert daemon.variation("banner", USER, "x") == "on"
                metrics = httpx.get(f"{relay.url}/metrics", timeout=10).text
                assert 'flagstaff_relay_redis_total{environment="production",event="lost"} 1' in (
                    metrics
                )
                status = relay.status()["environments"]["production"]["dataStoreStatus"]
                assert status == {
                    "state": "VALID",
                    "database": "redis",
                    "dbPrefix": redis_prefix,
                    "lastError": None,
                }
            finally:
                daemon.close()
        client.close()


def test_offline_mode_serves_a_data_file_and_picks_up_a_replacement(tmp_path: Path) -> None:
    data = tmp_path / "export.json"
    data.write_text(json.dumps({"flags": {"banner": flag("banner", 3, on=False)}, "segments": {}}))
    keys = Keys(sdk_key="sdk-offline", mobile_key="mob-offline", client_side_id="0" * 24)
    config = f"""
[relay]
offline_interval_seconds = 0.1

[environments.production]
sdk_key = "{keys.sdk_key}"
offline_file = "{data}"
"""
    relay = RelayProcess(data_dir=tmp_path / "relay", config=config)
    with running(relay):
        sdk = sdk_client(relay.url, keys.sdk_key)
        try:
            assert sdk.is_initialized()
            assert sdk.variation("banner", USER, None) is False
            # replaced without a version bump, as a hand edit would: the change still reaches SDKs
            replacement = tmp_path / "export.json.new"
            replacement.write_text(
                json.dumps({"flags": {"banner": flag("banner", 3, on=True)}, "segments": {}})
            )
            replacement.replace(data)
            wait_until(
                lambda: sdk.variation("banner", USER, None) is True,
                timeout=CATCH_UP_SECONDS,
                what="the new file",
            )
            served = served_flags(relay.url, keys.sdk_key)["banner"]
            assert served["version"] == 4
            status = relay.status()["environments"]["production"]
            assert status["source"] == "offline"
            assert status["connectionStatus"]["state"] == "VALID"

            data.write_text("{not json")
            wait_until(
                lambda: (
                    relay.status()["environments"]["production"]["connectionStatus"]["state"]
                    == "INTERRUPTED"
                ),
                timeout=CATCH_UP_SECONDS,
                what="the broken file to be reported",
            )
            error = relay.status()["environments"]["production"]["connectionStatus"]["lastError"]
            assert "not JSON" in error["message"]
            assert is_on(relay.url, keys.sdk_key, "banner")  # the last good data stays
        finally:
            sdk.close()


def test_a_relay_without_data_for_an_environment_answers_503_and_unknown_keys_401(
    tmp_path: Path,
) -> None:
    keys = Keys(sdk_key="sdk-unreached", mobile_key="", client_side_id="")
    # an upstream nobody listens on: the environment never gets data
    relay = RelayProcess(
        data_dir=tmp_path / "relay", config=relay_config(["http://127.0.0.1:9"], keys)
    )
    with running(relay):
        waiting = httpx.get(
            f"{relay.url}/sdk/latest-all", headers={"Authorization": keys.sdk_key}, timeout=10
        )
        assert waiting.status_code == 503
        assert int(waiting.headers["retry-after"]) >= 1
        unknown = httpx.get(
            f"{relay.url}/sdk/latest-all", headers={"Authorization": "sdk-nobody"}, timeout=10
        )
        assert unknown.status_code == 401
        status = relay.status()["environments"]["production"]
        assert status["connectionStatus"]["state"] == "INITIALIZING"
        assert status["serving"] is False
