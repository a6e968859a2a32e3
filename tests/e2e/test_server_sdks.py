"""The whole server (management API + delivery, one process, SQLite) with the official LaunchDarkly
Python server SDK 9.18.4 pointed at it: flags and segments made through the REST API evaluate as
expected in FDv1 streaming, FDv1 polling and FDv2, and API edits reach streaming SDKs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.settings import Settings
from ldclient import Context, datasystem
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.management import ok

ADMIN = "e2e-admin-token-0123456789"
USER = Context.create("user-1")


@dataclass
class Deployment:
    url: str
    api: httpx.Client
    sdk_key: str


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    settings = Settings(data_dir=tmp_path, admin_token=ADMIN, seed_demo=False)
    with (
        serve_flagstaff(settings) as server,
        httpx.Client(base_url=server.url, headers={"Authorization": ADMIN}, timeout=10) as api,
    ):
        sdk_key = _seed(api)
        # delivery follows the API's writes through the change feed, a moment later: SDKs made
        # before it has the last one would start from the flag as it was before that write
        wait_until(lambda: _delivered(api, sdk_key), what="delivery to have the seeded flags")
        yield Deployment(url=server.url, api=api, sdk_key=sdk_key)


def _delivered(api: httpx.Client, sdk_key: str) -> bool:
    response = api.get("/sdk/latest-all", headers={"Authorization": sdk_key})
    if response.status_code != 200:
        return False
    flags = response.json()["flags"]
    return "beta-only" in flags and flags["beta-only"]["on"] and bool(flags["beta-only"]["rules"])


def _seed(api: httpx.Client) -> str:
    project = ok(
        api.post(
            "/api/v2/projects",
            json={
                "key": "shop",
                "name": "Shop",
                "environments": [{"key": "production", "name": "Production", "color": "417505"}],
            },
        )
    )
    [production] = project["environments"]
    variations = [{"value": "old"}, {"value": "new"}]
    ok(
        api.post(
            "/api/v2/flags/shop", json={"key": "banner", "name": "B", "variations": variations}
        )
    )
    ok(api.post("/api/v2/segments/shop/production", json={"key": "beta", "name": "Beta"}))
    booleans = [{"value": False}, {"value": True}]
    ok(
        api.post(
            "/api/v2/flags/shop", json={"key": "beta-only", "name": "B", "variations": booleans}
        )
    )
    rule = {
        "variation": 1,
        "clauses": [
            {"attribute": "segmentMatch", "op": "segmentMatch", "values": ["beta"], "negate": False}
        ],
    }
    env = "/environments/production"
    ok(
        api.patch(
            "/api/v2/flags/shop/beta-only",
            json=[
                {"op": "replace", "path": f"{env}/on", "value": True},
                {"op": "replace", "path": f"{env}/fallthrough", "value": {"variation": 0}},
                {"op": "add", "path": f"{env}/rules/0", "value": rule},
            ],
        )
    )
    sdk_key: str = production["apiKey"]
    return sdk_key


def _client(deployment: Deployment, **options: Any) -> LDClient:
    config = Config(
        deployment.sdk_key,
        base_uri=deployment.url,
        stream_uri=deployment.url,
        events_uri=deployment.url,
        send_events=False,
        diagnostic_opt_out=True,
        **options,
    )
    return LDClient(config=config, start_wait=10)


def _follows_api_edits(client: LDClient, api: httpx.Client) -> None:
    assert client.is_initialized()
    # A new flag is off: it serves its off variation.
    assert client.variation("banner", USER, "default") == "new"
    assert client.variation("beta-only", USER, "default") is False

    patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
    ok(api.patch("/api/v2/flags/shop/banner", json=patch))
    wait_until(lambda: client.variation("banner", USER, "default") == "old", what="targeting")

    add = [{"op": "add", "path": "/included/0", "value": "user-1"}]
    ok(api.patch("/api/v2/segments/shop/production/beta", json=add))
    wait_until(lambda: client.variation("beta-only", USER, "default") is True, what="segment")

    assert api.delete("/api/v2/flags/shop/banner").status_code == 204
    wait_until(lambda: client.variation("banner", USER, "default") == "default", what="deletion")


def test_fdv1_streaming_sdk_follows_management_api_edits(deployment: Deployment) -> None:
    client = _client(deployment)
    try:
        _follows_api_edits(client, deployment.api)
    finally:
        client.close()


def test_fdv2_sdk_follows_management_api_edits(deployment: Deployment) -> None:
    client = _client(deployment, datasystem_config=datasystem.default().build())
    try:
        _follows_api_edits(client, deployment.api)
    finally:
        client.close()


def test_fdv1_polling_sdk_evaluates_flags_made_through_the_api(deployment: Deployment) -> None:
    client = _client(deployment, stream=False)
    try:
        assert client.is_initialized()
        assert client.variation("banner", USER, "default") == "new"
        assert client.variation("beta-only", USER, "default") is False
    finally:
        client.close()
    patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
    ok(deployment.api.patch("/api/v2/flags/shop/banner", json=patch))
    # Polling SDKs wait 30 s between polls: a fresh client shows what the next poll returns.
    wait_until(lambda: _polled_banner(deployment) == "old", what="poll sees the edit")


def _polled_banner(deployment: Deployment) -> Any:
    client = _client(deployment, stream=False)
    try:
        return client.variation("banner", USER, "default")
    finally:
        client.close()


def test_an_unknown_sdk_key_is_refused_with_401(deployment: Deployment) -> None:
    response = httpx.get(
        f"{deployment.url}/sdk/latest-all", headers={"Authorization": "sdk-not-a-real-key"}
    )
    assert response.status_code == 401
