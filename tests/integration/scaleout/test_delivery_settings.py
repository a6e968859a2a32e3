"""The delivery knobs of `flagstaff serve` (environment variables) reach the delivery node the
composition root builds, bad values are refused naming the variable, and a delivery-only server
starts with its database unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.errors import StoreUnavailable
from flagstaff_server.settings import Settings, SettingsError
from support.ports import free_port


async def test_delivery_knobs_from_the_environment_reach_the_node(tmp_path: Path) -> None:
    environ = {
        "FLAGSTAFF_MAX_STREAMS": "7",
        "FLAGSTAFF_FULL_SENDS_PER_SECOND": "2.5",
        "FLAGSTAFF_MAX_CONNECTION_AGE_SECONDS": "0",
        "FLAGSTAFF_HEARTBEAT_SECONDS": "20",
        "FLAGSTAFF_RETRY_AFTER_SECONDS": "2",
    }
    settings = Settings.from_env(environ, data_dir=tmp_path, seed_demo=False)
    async with Flagstaff(settings, announce=lambda line: None).running() as server:
        assert server.delivery is not None
        config = server.delivery.config
        assert config.limits.max_streams == 7
        assert config.limits.full_sends_per_second == 2.5
        assert config.limits.full_send_burst == 5
        assert config.limits.max_connection_age_seconds == 0
        assert config.heartbeat_seconds == 20
        assert config.limits.retry_after_seconds == 2
        assert 2 <= server.delivery.admission.retry_after() <= 4
        assert server.delivery.admission.stream_deadline() == float("inf")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("FLAGSTAFF_MAX_STREAMS", "many", "FLAGSTAFF_MAX_STREAMS must be an integer"),
        ("FLAGSTAFF_MAX_STREAMS", "0", "max streams must be at least 1"),
        ("FLAGSTAFF_FULL_SENDS_PER_SECOND", "0", "full sends per second must be above 0"),
        ("FLAGSTAFF_FULL_SENDS_PER_SECOND", "nan", "must be a finite number"),
        ("FLAGSTAFF_MAX_CONNECTION_AGE_SECONDS", "-1", "max connection age must be zero"),
        ("FLAGSTAFF_RETRY_AFTER_SECONDS", "0.5", "retry after seconds must be at least 1"),
        ("FLAGSTAFF_HEARTBEAT_SECONDS", "90", "heartbeat must be above 0 and at most 60"),
    ],
)
def test_bad_delivery_knobs_are_refused_naming_them(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({name: value})


async def test_a_delivery_only_server_starts_with_its_database_unreachable(tmp_path: Path) -> None:
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/flagstaff"
    settings = Settings(data_dir=tmp_path, database_url=nowhere, role="delivery")
    async with Flagstaff(settings, announce=lambda line: None).running() as server:
        status, body = await server.status()
        assert status == 200
        assert body["parts"]["store"]["status"] == "down"
        assert body["parts"]["delivery"]["environments"] == 0
    api_settings = Settings(data_dir=tmp_path, database_url=nowhere, role="api")
    with pytest.raises(StoreUnavailable):
        await Flagstaff(api_settings, announce=lambda line: None).start()
