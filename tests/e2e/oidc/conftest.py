"""Fixtures of the single sign-on tests: the whole server in a thread of this process on a real
socket (no cold start of a process) and one real OpenID provider per module (it needs
Flagstaff's callback URL, so it starts second), SSO configured through
the API with the group `engineering` mapped to the team `eng`, and a project to land in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from flagstaff_server.settings import Settings
from oidc_support import SsoSite, block_web_fonts, running_provider
from support.in_process import serve_flagstaff

ADMIN_TOKEN = "sso-e2e-admin-token-0123456789"


@pytest.fixture(scope="module")
def sso_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SsoSite]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("flagstaff-sso"), admin_token=ADMIN_TOKEN, seed_demo=False
    )
    with serve_flagstaff(settings) as server:
        callback = f"{server.url}/api/v2/session/sso/callback"
        with (
            running_provider(callback) as provider,
            httpx.Client(
                base_url=server.url, headers={"Authorization": ADMIN_TOKEN}, timeout=10
            ) as api,
        ):
            for made in (
                api.post("/api/v2/teams", json={"key": "eng", "name": "Engineering"}),
                api.post(
                    "/api/v2/projects",
                    json={
                        "key": "shop",
                        "name": "Shop",
                        "environments": [
                            {"key": "production", "name": "Production", "color": "417505"}
                        ],
                    },
                ),
                api.put(
                    "/api/v2/sso/settings",
                    json={
                        "enabled": True,
                        "issuer": provider.issuer,
                        "clientId": provider.client_id,
                        "clientSecret": provider.client_secret,
                        "scopes": ["openid", "email", "profile", "groups"],
                        "groupTeams": {"engineering": "eng"},
                        "defaultRole": "reader",
                    },
                ),
            ):
                assert made.is_success, made.text
            yield SsoSite(url=server.url, api=api, provider=provider)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile: no Flagstaff session, no provider session."""
    made = browser.new_context(viewport={"width": 1280, "height": 900})
    made.set_default_timeout(15_000)
    block_web_fonts(made)
    try:
        yield made
    finally:
        made.close()
