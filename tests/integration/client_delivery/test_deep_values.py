"""A flag value nested as deep as the management API stores (`nesting.MAX_DEPTH`) is served by
every delivery protocol and evaluated by the project's SDK and the official one: whatever the API
accepts, the encoders and decoders on the way to an application accept too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_server import (
    PROJECT,
    Deployment,
    b64,
    next_event,
    running_server,
    sse_events,
    wait_delivered,
)
from flagstaff_sdk import Client, Config, Context
from flagstaff_server.nesting import MAX_DEPTH
from ldclient import Context as LDContext
from support.management import ok, sdk_client

KEY = "deep-flag"
USER = {"kind": "user", "key": "user-1"}


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


DEEPEST = nested(MAX_DEPTH)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with running_server(Path(tmp_path_factory.mktemp("deep"))) as deployment:
        body = {
            "key": KEY,
            "name": KEY,
            "variations": [{"value": "flat"}, {"value": DEEPEST}],
            "clientSideAvailability": {"usingEnvironmentId": True, "usingMobileKey": True},
        }
        ok(deployment.api.post(f"/api/v2/flags/{PROJECT}", json=body))
        on = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
        semantic = {"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"}
        ok(deployment.api.patch(f"/api/v2/flags/{PROJECT}/{KEY}", json=on, headers=semantic))
        fallthrough = [
            {
                "op": "replace",
                "path": "/environments/production/fallthrough",
                "value": {"variation": 1},
            }
        ]
        deployment.patch_flag(KEY, fallthrough)
        wait_delivered(deployment.api)
        yield deployment


def test_server_side_polling_and_streaming_serve_it(deployment: Deployment) -> None:
    sdk = {"Authorization": deployment.sdk_key}
    latest = httpx.get(f"{deployment.url}/sdk/latest-all", headers=sdk, timeout=10)
    assert latest.status_code == 200, latest.text
    assert latest.json()["flags"][KEY]["variations"][1] == DEEPEST
    fdv2 = httpx.get(f"{deployment.url}/sdk/poll", headers=sdk, timeout=10)
    assert fdv2.status_code == 200, fdv2.text
    objects = {
        event["data"]["key"]: event["data"]["object"]
        for event in fdv2.json()["events"]
        if event["event"] == "put-object"
    }
    assert objects[KEY]["variations"][1] == DEEPEST
    with httpx.stream("GET", f"{deployment.url}/all", headers=sdk, timeout=10) as stream:
        _name, put = next_event(sse_events(stream.iter_lines()), "put")
    assert put["data"]["flags"][KEY]["variations"][1] == DEEPEST


def test_client_side_and_ofrep_serve_it(deployment: Deployment) -> None:
    evalx = httpx.get(
        f"{deployment.url}/sdk/evalx/{deployment.client_side_id}/contexts/{b64(USER)}"
    )
    assert evalx.status_code == 200, evalx.text
    assert evalx.json()[KEY]["value"] == DEEPEST
    ofrep = httpx.post(
        f"{deployment.url}/ofrep/v1/evaluate/flags/{KEY}",
        json={"context": {"targetingKey": "user-1"}},
        headers={"Authorization": f"Bearer {deployment.sdk_key}"},
    )
    assert ofrep.status_code == 200, ofrep.text
    assert ofrep.json()["value"] == DEEPEST


def test_the_sdks_evaluate_it(deployment: Deployment) -> None:
    config = Config(sdk_key=deployment.sdk_key, base_uri=deployment.url, send_events=False)
    with Client(config) as client:
        assert client.wait_for_initialization(10)
        assert client.json_variation(KEY, Context.create("user-1"), None) == DEEPEST
    official = sdk_client(deployment.url, deployment.sdk_key)
    try:
        assert official.variation(KEY, LDContext.create("user-1"), None) == DEEPEST
    finally:
        official.close()
