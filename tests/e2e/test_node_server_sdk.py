"""The official LaunchDarkly Node server SDK (`@launchdarkly/node-server-sdk`, pinned in
tests/e2e/node/package-lock.json) pointed at the whole server: flags and segments made through the
management API evaluate as expected, and a targeting change, a segment change and a deletion reach
a streaming SDK. The SDK runs in `node tests/e2e/node/server_sdk_check.mjs`, driven over stdin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from flagstaff_server.settings import Settings
from node_sdk import start_node_sdk, stop_node_sdk
from support.in_process import serve_flagstaff
from support.management import ok

ADMIN = "e2e-node-admin-token-0123456789"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path, admin_token=ADMIN, seed_demo=False)
    with serve_flagstaff(settings) as served:
        yield served.url


def _seed(api: httpx.Client) -> str:
    """Project `shop` (environment `production`), flag `banner` (off), segment `beta` (empty) and
    flag `beta-only` serving true to members of `beta`; returns the SDK key."""
    environments = [{"key": "production", "name": "Production", "color": "417505"}]
    body = {"key": "shop", "name": "Shop", "environments": environments}
    sdk_key: str = ok(api.post("/api/v2/projects", json=body))["environments"][0]["apiKey"]
    text = [{"value": "on"}, {"value": "off"}]
    ok(api.post("/api/v2/flags/shop", json={"key": "banner", "name": "B", "variations": text}))
    ok(api.post("/api/v2/segments/shop/production", json={"key": "beta", "name": "Beta"}))
    booleans = [{"value": False}, {"value": True}]
    flag = {"key": "beta-only", "name": "B", "variations": booleans}
    ok(api.post("/api/v2/flags/shop", json=flag))
    clause = {"attribute": "segmentMatch", "op": "segmentMatch", "values": ["beta"]}
    env = "/environments/production"
    patch = [
        {"op": "replace", "path": f"{env}/on", "value": True},
        {"op": "replace", "path": f"{env}/fallthrough", "value": {"variation": 0}},
        {"op": "add", "path": f"{env}/rules/0", "value": {"variation": 1, "clauses": [clause]}},
    ]
    ok(api.patch("/api/v2/flags/shop/beta-only", json=patch))
    return sdk_key


def test_node_streaming_sdk_follows_flags_segments_and_deletions(node: str, server: str) -> None:
    with httpx.Client(base_url=server, headers={"Authorization": ADMIN}, timeout=10) as api:
        sdk_key = _seed(api)
        sdk = start_node_sdk(node, server, sdk_key, "stream")
        try:
            assert sdk.next("ready")["initialized"] is True
            assert sdk.evaluate("banner", "beta-only", "missing") == {
                "banner": "off",
                "beta-only": False,
                "missing": "default",
            }

            patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
            ok(api.patch("/api/v2/flags/shop/banner", json=patch))
            sdk.wait_for("banner", "on")

            include = [{"op": "add", "path": "/included/0", "value": "user-1"}]
            ok(api.patch("/api/v2/segments/shop/production/beta", json=include))
            sdk.wait_for("beta-only", True)

            assert api.delete("/api/v2/flags/shop/banner").status_code == 204
            sdk.wait_for("banner", "default")
            # the SDK announced each change to its listeners, as applications see them
            assert {"banner", "beta-only"} <= set(sdk.updates)
        finally:
            stop_node_sdk(sdk)
        assert sdk.process.returncode == 0


def test_node_polling_sdk_initializes_and_evaluates(node: str, server: str) -> None:
    with httpx.Client(base_url=server, headers={"Authorization": ADMIN}, timeout=10) as api:
        sdk_key = _seed(api)
        patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
        ok(api.patch("/api/v2/flags/shop/banner", json=patch))
    sdk = start_node_sdk(node, server, sdk_key, "poll")
    try:
        assert sdk.next("ready")["initialized"] is True
        assert sdk.evaluate("banner", "beta-only") == {"banner": "on", "beta-only": False}
    finally:
        stop_node_sdk(sdk)
    assert sdk.process.returncode == 0


def test_node_sdk_with_an_unknown_key_does_not_initialize(node: str, server: str) -> None:
    sdk = start_node_sdk(node, server, "sdk-0000-not-a-real-key", "stream")
    try:
        assert sdk.next("ready")["initialized"] is False
        assert sdk.evaluate("banner") == {"banner": "default"}
    finally:
        stop_node_sdk(sdk)
