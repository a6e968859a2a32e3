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


def test_admin_token_is_not_shown_in_repr() -> None:
    assert "s3cret" not in repr(Settings(admin_token="s3cret"))


@pytest.mark.parametrize(
    ("values", "environ", "named"),
    [
        ({"port": 70000}, {}, "port"),
        ({"role": "worker"}, {}, "role"),
        ({"key_grace_seconds": -1}, {}, "grace"),
        ({"redis_url": "http://cache"}, {}, "Redis"),
        ({"admin_token": "  "}, {}, "FLAGSTAFF_ADMIN_TOKEN"),
        ({}, {"FLAGSTAFF_KEY_GRACE_SECONDS": "a day"}, "FLAGSTAFF_KEY_GRACE_SECONDS"),
    ],
)
def test_bad_values_are_refused_naming_the_setting(
    values: dict[str, object], environ: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(environ, **values)
