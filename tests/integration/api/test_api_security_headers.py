"""Every management API answer carries `Cache-Control: no-store` and `X-Content-Type-Options:
nosniff` (a token's creation returns its secret, environments their SDK keys); the reference page
at `/api/v2/docs` has a Content-Security-Policy that lets only this server's files run and may
not be framed. Before, API answers had neither header and the page had no policy."""

from __future__ import annotations

import httpx
import pytest
from platform_api import ADMIN, create_project

CSP_DIRECTIVES = {
    "default-src 'self'",
    "script-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
}


def assert_private(response: httpx.Response) -> None:
    assert response.headers["cache-control"] == "no-store", response.request.url
    assert response.headers["x-content-type-options"] == "nosniff", response.request.url


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/api/v2/projects/shop", ADMIN, 200),
        ("GET", "/api/v2/projects/shop/environments", ADMIN, 200),
        ("GET", "/api/v2/projects", {}, 401),
        ("GET", "/api/v2/projects/nope", ADMIN, 404),
        ("GET", "/api/v2/no-such-route", ADMIN, 404),
        ("DELETE", "/api/v2/auditlog", ADMIN, 405),
        ("GET", "/api/v2/openapi.json", {}, 200),
        ("GET", "/api/v2/docs/init.js", {}, 200),
    ],
)
async def test_api_answers_are_not_cached_nor_sniffed(
    client: httpx.AsyncClient, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    await create_project(client, "shop")
    response = await client.request(method, path, headers=headers)
    assert response.status_code == status, response.text
    assert_private(response)


async def test_a_created_token_and_refusals_before_any_route_are_not_cached(
    client: httpx.AsyncClient,
) -> None:
    created = await client.post(
        "/api/v2/tokens", json={"name": "ci", "role": "reader"}, headers=ADMIN
    )
    assert created.status_code == 201
    assert created.json()["token"].startswith("api-")
    assert_private(created)
    too_big = await client.post(
        "/api/v2/projects",
        content=b"x" * (2 << 20),
        headers={**ADMIN, "Content-Type": "application/json"},
    )
    assert too_big.status_code == 413
    assert_private(too_big)


async def test_the_reference_page_runs_only_this_servers_scripts_and_is_never_framed(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/api/v2/docs")
    assert page.status_code == 200
    policy = {part.strip() for part in page.headers["content-security-policy"].split(";")}
    assert policy >= CSP_DIRECTIVES
    assert page.headers["x-frame-options"] == "DENY"
    assert_private(page)
    assert "<script>" not in page.text  # no inline script: the policy would refuse it


async def test_versioned_swagger_files_keep_their_long_caching(client: httpx.AsyncClient) -> None:
    page = (await client.get("/api/v2/docs")).text
    bundle = page.split('<script src="', 1)[1].split('"', 1)[0]
    response = await client.get(bundle)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.headers["x-content-type-options"] == "nosniff"
