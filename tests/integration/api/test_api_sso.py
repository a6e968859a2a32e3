"""The single sign-on routes over HTTP: the settings (admins only, the secret never shown back,
a bad field named in a 400), the public "is there SSO?" answer for the sign-in page, and the
browser's start and callback refusing without a 500: SSO off is a 404, an unreachable provider
and a callback that no sign-in in this browser started are 401 problems (a browser is sent back
to the sign-in page with the reason instead). The whole flow against a real provider is
tests/e2e/oidc."""

from __future__ import annotations

import httpx
import pytest
from platform_api import ADMIN, problem

pytestmark = pytest.mark.parametrize("server_store", ["memory"], indirect=True)

SETTINGS = {
    "enabled": True,
    # nothing listens on port 9 (discard): discovery fails at once
    "issuer": "http://127.0.0.1:9",
    "clientId": "flagstaff",
    "clientSecret": "s3cret",
}


async def test_settings_are_stored_without_showing_the_secret(client: httpx.AsyncClient) -> None:
    put = await client.put("/api/v2/sso/settings", json=SETTINGS, headers=ADMIN)
    assert put.status_code == 200, put.text
    got = (await client.get("/api/v2/sso/settings", headers=ADMIN)).json()
    assert got["clientSecretSet"] is True
    assert "clientSecret" not in got
    assert (await client.get("/api/v2/session/sso")).json() == {"enabled": True, "required": False}


async def test_a_bad_setting_is_a_400_naming_the_field(client: httpx.AsyncClient) -> None:
    body = {**SETTINGS, "groupTeams": {"engineering": "no-such-team"}}
    refused = await client.put("/api/v2/sso/settings", json=body, headers=ADMIN)
    assert problem(refused, 400)["path"] == "/groupTeams/engineering"


async def test_starting_while_sso_is_off_is_a_404(client: httpx.AsyncClient) -> None:
    problem(await client.get("/api/v2/session/sso/start"), 404)


async def test_an_unreachable_provider_is_a_401_not_a_500(client: httpx.AsyncClient) -> None:
    await client.put("/api/v2/sso/settings", json=SETTINGS, headers=ADMIN)
    body = problem(await client.get("/api/v2/session/sso/start"), 401)
    assert "could not be reached" in body["message"]


async def test_a_callback_not_started_here_is_refused(client: httpx.AsyncClient) -> None:
    await client.put("/api/v2/sso/settings", json=SETTINGS, headers=ADMIN)
    url = "/api/v2/session/sso/callback?state=forged&code=c"
    assert "not started in this browser" in problem(await client.get(url), 401)["message"]
    browser = await client.get(url, headers={"Accept": "text/html"})
    assert browser.status_code == 303
    assert browser.headers["location"].startswith("/ui/?ssoError=")
    assert "flagstaff_session" not in browser.cookies
