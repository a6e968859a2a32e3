"""Server settings: command-line values win over the environment, which wins over defaults; bad
values are refused with a message naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from flagstaff_server.settings import DEFAULT_KEY_GRACE_SECONDS, Settings, SettingsError


def test_defaults_put_sqlite_in_the_data_dir() -> None:
    settings = Settings.from_env({}, data_dir=Path("/srv/flags"))
    assert settings.resolved_database_url == "sqlite:////srv/flags/flagstaff.db"
    assert settings.key_grace_seconds == DEFAULT_KEY_GRACE_SECONDS
    assert settings.admin_token is None
    assert (settings.serves_api, settings.serves_delivery) == (True, True)


def test_environment_fills_what_the_command_line_leaves_out() -> None:
    environ = {
        "FLAGSTAFF_ADMIN_TOKEN": "from-env",
        "FLAGSTAFF_DATABASE_URL": "postgresql://db/flags",
        "FLAGSTAFF_REDIS_URL": "redis://cache:6379/0",
        "FLAGSTAFF_KEY_GRACE_SECONDS": "60",
    }
    settings = Settings.from_env(environ, database_url=None, key_grace_seconds=None)
    assert settings.admin_token == "from-env"
    assert settings.resolved_database_url == "postgresql://db/flags"
    assert settings.redis_url == "redis://cache:6379/0"
    assert settings.key_grace_seconds == 60
    given = Settings.from_env(environ, database_url="sqlite:///x.db", key_grace_seconds=5)
    assert given.resolved_database_url == "sqlite:///x.db"
    assert given.key_grace_seconds == 5


def test_the_worker_runs_alone_or_inside_the_all_in_one_process() -> None:
    assert Settings(role="worker").serves_worker
    assert Settings(role="all").serves_worker
    worker = Settings(role="worker")
    assert not worker.serves_api
    assert not worker.serves_delivery
    assert not worker.serves_ingest
    assert not Settings(role="api").serves_worker
    tuned = Settings.from_env(
        {"FLAGSTAFF_WORKER_POLL_SECONDS": "0.2", "FLAGSTAFF_WORKER_LEASE_SECONDS": "3"}
    )
    assert (tuned.worker_poll_seconds, tuned.worker_lease_seconds) == (0.2, 3.0)


def test_admin_token_is_not_shown_in_repr() -> None:
    assert "s3cret" not in repr(Settings(admin_token="s3cret"))


@pytest.mark.parametrize(
    ("values", "environ", "named"),
    [
        ({"port": 70000}, {}, "port"),
        ({"role": "scheduler"}, {}, "role"),
        ({}, {"FLAGSTAFF_WORKER_POLL_SECONDS": "0"}, "FLAGSTAFF_WORKER_POLL_SECONDS"),
        ({}, {"FLAGSTAFF_WORKER_LEASE_SECONDS": "1"}, "FLAGSTAFF_WORKER_LEASE_SECONDS"),
        ({"key_grace_seconds": -1}, {}, "grace"),
        ({"redis_url": "http://cache"}, {}, "Redis"),
        ({"admin_token": "  "}, {}, "FLAGSTAFF_ADMIN_TOKEN"),
        ({}, {"FLAGSTAFF_KEY_GRACE_SECONDS": "a day"}, "FLAGSTAFF_KEY_GRACE_SECONDS"),
        ({}, {"FLAGSTAFF_STATUS_PEERS": "api-a:8030/status"}, "FLAGSTAFF_STATUS_PEERS"),
        ({}, {"FLAGSTAFF_STATUS_PEERS": "http://[::1/status"}, "FLAGSTAFF_STATUS_PEERS"),
        ({}, {"FLAGSTAFF_STATUS_POLL_SECONDS": "0"}, "FLAGSTAFF_STATUS_POLL_SECONDS"),
    ],
)
def test_bad_values_are_refused_naming_the_setting(
    values: dict[str, object], environ: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(environ, **values)


def test_the_region_comes_from_flagstaff_region_and_defaults_to_local() -> None:
    assert Settings.from_env({}).region == "local"
    assert Settings.from_env({"FLAGSTAFF_REGION": "eu-west-1"}).region == "eu-west-1"


@pytest.mark.parametrize("name", ["", "EU", "eu west", "-eu", "x" * 64])
def test_a_bad_region_name_is_refused_naming_the_variable(name: str) -> None:
    with pytest.raises(SettingsError, match="FLAGSTAFF_REGION"):
        Settings(region=name)


def test_a_node_nobody_publishes_to_polls_the_outbox_sub_second() -> None:
    # a delivery (or ingest) node without Redis: no commit in its process wakes the feed
    assert Settings(role="delivery").resolved_feed_poll_seconds == 0.25
    assert Settings(role="ingest").resolved_feed_poll_seconds == 0.25
    # the API's own commits wake the in-process feed; Redis wakes its subscribers
    assert Settings(role="all").resolved_feed_poll_seconds is None
    assert Settings(role="delivery", redis_url="redis://r").resolved_feed_poll_seconds is None
    chosen = Settings.from_env({"FLAGSTAFF_FEED_POLL_SECONDS": "1.5"}, role="all")
    assert chosen.resolved_feed_poll_seconds == 1.5


@pytest.mark.parametrize("value", ["0", "-1", "61", "soon", "nan"])
def test_a_bad_feed_poll_interval_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(SettingsError, match="FLAGSTAFF_FEED_POLL_SECONDS"):
        Settings.from_env({"FLAGSTAFF_FEED_POLL_SECONDS": value})


def test_status_peers_are_a_comma_separated_list_of_urls() -> None:
    settings = Settings.from_env(
        {
            "FLAGSTAFF_STATUS_PEERS": "http://api-a:8030/status, https://delivery-b/status,",
            "FLAGSTAFF_STATUS_POLL_SECONDS": "0.5",
        }
    )
    assert settings.status_peers == ("http://api-a:8030/status", "https://delivery-b/status")
    assert settings.status_poll_seconds == 0.5
