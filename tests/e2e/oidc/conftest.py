"""Fixtures of the single sign-on tests: one `flagstaff serve` and one real OpenID provider per
module (the provider needs Flagstaff's callback URL, so it starts second), SSO configured through
the API with the group `engineering` mapped to the team `eng`, and a project to land in."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from oidc_support import Provider, running_provider
from support.processes import ServeProcess, running

ADMIN_TOKEN = "sso-e2e-admin-token-0123456789"
START_SECONDS = 60.0


@dataclass(frozen=True)
class SsoSite:
    url: str
    api: httpx.Client
    provider: Provider


@pytest.fixture(scope="module")
def sso_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SsoSite]:
    server = ServeProcess(
        data_dir=tmp_path_factory.mktemp("flagstaff-sso"),
        name="serve",
        admin_token=ADMIN_TOKEN,
        start_timeout=START_SECONDS,
    )
    with running(server):
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
    """A fresh browser profile (no Flagstaff or provider session) that reaches loopback only:
    the provider's sign-in page asks for a web font, refused here rather than waited for."""
    made = browser.new_context(viewport={"width": 1280, "height": 900})
    made.set_default_timeout(15_000)
    made.route(
        "**/*",
        lambda route: route.continue_() if "127.0.0.1" in route.request.url else route.abort(),
    )
    try:
        yield made
    finally:
        made.close()
