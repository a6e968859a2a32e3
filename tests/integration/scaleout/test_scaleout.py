"""Scale-out with real processes: `flagstaff serve --role api` and `--role delivery` sharing
PostgreSQL and the Redis Streams change feed, with the official Python SDK 9.18.4 on the delivery
process; the all-in-one server (in this process) on PostgreSQL + Redis; and decoupling: the
delivery node keeps serving with the API stopped, then with the database stopped, and restarted
during the outage it serves its last snapshot at once."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from flagstaff_server.settings import Settings
from ldclient import Context
from scaleout_cluster import (
    ADMIN,
    SETTLE_SECONDS,
    ServerProcess,
    admin_client,
    create_project,
    in_process,
    switch_on,
)
from support.deadlines import wait_until
from support.management import create_flag, sdk_client
from support.private_postgres import private_postgres
from support.processes import running
from support.services import dead_redis_url, postgres_database, redis_database

pytestmark = [pytest.mark.service, pytest.mark.slow]

USER = Context.create("user-1")


def _flags(url: str, sdk_key: str) -> dict[str, object]:
    """The flags `/sdk/latest-all` serves, failing on anything but 200."""
    response = httpx.get(f"{url}/sdk/latest-all", headers={"Authorization": sdk_key}, timeout=10)
    assert response.status_code == 200, response.text
    flags: dict[str, object] = response.json()["flags"]
    return flags


def test_the_all_in_one_server_delivers_on_postgresql_and_the_redis_feed(tmp_path: Path) -> None:
    with postgres_database() as database, redis_database() as feed:
        settings = Settings(
            data_dir=tmp_path, database_url=database, redis_url=feed, admin_token=ADMIN
        )
        with in_process(settings) as url, admin_client(url) as client:
            sdk_key = create_project(client)
            create_flag(client, "banner")
            sdk = sdk_client(url, sdk_key)
            try:
                assert sdk.is_initialized()
                assert sdk.variation("banner", USER, "x") == "off"
                switch_on(client, "banner")
                wait_until(
                    lambda: sdk.variation("banner", USER, "x") == "on",
                    timeout=SETTLE_SECONDS,
                    what="targeting",
                )
            finally:
                sdk.close()
            parts = httpx.get(f"{url}/status", timeout=10).json()["parts"]
            assert parts["store"]["backend"] == "postgresql"
            assert parts["changeFeed"]["kind"] == "redis"


def _serves_streams_and_polls(url: str, sdk_key: str) -> None:
    """A new streaming SDK and a new polling SDK both initialize and see the flag switched on."""
    for options in ({}, {"stream": False}):
        sdk = sdk_client(url, sdk_key, **options)
        try:
            assert sdk.is_initialized(), options
            assert sdk.variation("banner", USER, "x") == "on", options
        finally:
            sdk.close()
    assert "banner" in _flags(url, sdk_key)


def test_api_and_delivery_processes_share_postgresql_and_redis_and_delivery_outlives_both(
    tmp_path: Path,
) -> None:
    with private_postgres() as postgres, redis_database() as feed:
        shared = ["--database", postgres.url, "--redis", feed]
        api = ServerProcess(args=["--role", "api", *shared], data_dir=tmp_path / "api")
        delivery = ServerProcess(
            args=["--role", "delivery", *shared], data_dir=tmp_path / "delivery"
        )
        with running(api, delivery):
            assert httpx.get(f"{delivery.url}/api/v2/projects").status_code == 404
            assert "api" not in delivery.status()["parts"]
            with admin_client(api.url) as client:
                sdk_key = create_project(client)
                streaming = sdk_client(delivery.url, sdk_key)
                assert streaming.is_initialized()
                # made through the API process, carried by the feed, streamed by delivery
                create_flag(client, "banner")
                wait_until(
                    lambda: streaming.variation("banner", USER, "x") == "off",
                    timeout=SETTLE_SECONDS,
                    what="flag",
                )
                switch_on(client, "banner")
                wait_until(
                    lambda: streaming.variation("banner", USER, "x") == "on",
                    timeout=SETTLE_SECONDS,
                    what="change",
                )
            try:
                # the API process is gone: streams and polls go on
                api.stop()
                _serves_streams_and_polls(delivery.url, sdk_key)

                # and the database too
                postgres.stop()
                assert delivery.status()["parts"]["store"]["status"] == "down"
                _serves_streams_and_polls(delivery.url, sdk_key)
                assert streaming.variation("banner", USER, "x") == "on"
            finally:
                streaming.close()
            before = _flags(delivery.url, sdk_key)

        # restarted while the database is still down, and with the feed unreachable too, so
        # whatever it serves can only come from its disk snapshot: served at once
        offline = ["--role", "delivery", "--database", postgres.url, "--redis", dead_redis_url()]
        restarted = ServerProcess(args=offline, data_dir=tmp_path / "delivery")
        with running(restarted):
            assert _flags(restarted.url, sdk_key) == before
            _serves_streams_and_polls(restarted.url, sdk_key)
            parts = restarted.status()["parts"]
            assert parts["store"]["status"] == "down"
            assert parts["changeFeed"]["status"] == "down"
