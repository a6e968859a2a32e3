"""The webhook delivery settings: retry waits as a comma-separated list, the give-up time, the
attempt timeout and the public URL of chat links, each refused naming its variable when bad."""

from __future__ import annotations

import pytest
from flagstaff_server.settings import DEFAULT_WEBHOOK_RETRY_SECONDS, Settings, SettingsError


def test_the_webhook_settings_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "FLAGSTAFF_WEBHOOK_RETRY_SECONDS": "0.5, 1,2",
            "FLAGSTAFF_WEBHOOK_GIVE_UP_SECONDS": "600",
            "FLAGSTAFF_WEBHOOK_TIMEOUT_SECONDS": "3",
            "FLAGSTAFF_PUBLIC_URL": "https://flags.example.com/",
        }
    )
    assert settings.webhook_retry_seconds == (0.5, 1.0, 2.0)
    assert settings.webhook_give_up_seconds == 600
    assert settings.webhook_timeout_seconds == 3
    assert settings.resolved_public_url == "https://flags.example.com"


def test_defaults_retry_for_an_hour_between_attempts_and_link_to_this_process() -> None:
    settings = Settings.from_env({}, port=8123)
    assert settings.webhook_retry_seconds == DEFAULT_WEBHOOK_RETRY_SECONDS
    assert max(settings.webhook_retry_seconds) == 3600
    assert settings.webhook_give_up_seconds == 86_400
    assert settings.resolved_public_url == "http://127.0.0.1:8123"
    assert Settings(host="::1", port=9).resolved_public_url == "http://[::1]:9"


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"FLAGSTAFF_WEBHOOK_RETRY_SECONDS": "1,0"}, "FLAGSTAFF_WEBHOOK_RETRY_SECONDS"),
        ({"FLAGSTAFF_WEBHOOK_RETRY_SECONDS": "1,x"}, "FLAGSTAFF_WEBHOOK_RETRY_SECONDS"),
        ({"FLAGSTAFF_WEBHOOK_RETRY_SECONDS": ",".join(["1"] * 21)}, "RETRY_SECONDS"),
        ({"FLAGSTAFF_WEBHOOK_GIVE_UP_SECONDS": "-1"}, "FLAGSTAFF_WEBHOOK_GIVE_UP_SECONDS"),
        ({"FLAGSTAFF_WEBHOOK_TIMEOUT_SECONDS": "0"}, "FLAGSTAFF_WEBHOOK_TIMEOUT_SECONDS"),
        ({"FLAGSTAFF_WEBHOOK_TIMEOUT_SECONDS": "500"}, "FLAGSTAFF_WEBHOOK_TIMEOUT_SECONDS"),
        ({"FLAGSTAFF_PUBLIC_URL": "flags.example.com"}, "FLAGSTAFF_PUBLIC_URL"),
    ],
)
def test_bad_webhook_settings_are_refused_naming_the_variable(
    environ: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(environ)
