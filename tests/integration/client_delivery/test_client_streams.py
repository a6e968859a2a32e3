"""Client streams over real HTTP against the whole server: a `put` on connect, then edits made
through the management API arrive as `patch`/`delete` (or a whole `put` when a segment changed),
only for flags the client may see; ping streams and mobile REPORT streams."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from client_server import ENV_PATH, PROJECT, Deployment, b64, next_event, running_server
from client_server import sse_events as events_of
from support.deadlines import wait_until
from support.management import ok

USER = {"kind": "user", "key": "user-1"}


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    with running_server(tmp_path) as deployment:
        yield deployment


@pytest.fixture
def http(deployment: Deployment) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=deployment.url, timeout=5) as client:
        yield client


def test_browser_stream_follows_management_api_edits(
    deployment: Deployment, http: httpx.Client
) -> None:
    with http.stream("GET", f"/eval/{deployment.client_side_id}/{b64(USER)}") as stream:
        assert stream.status_code == 200
        events = events_of(stream.iter_lines())
        _, put = next_event(events, "put")
        assert put["bool-flag"]["value"] is True
        assert "server-flag" not in put
        version = put["bool-flag"]["version"]

        # a server-only flag's edit reaches no browser; the next event is the visible edit
        deployment.set_fallthrough("server-flag", 0)
        deployment.set_fallthrough("bool-flag", 0)
        name, patch = next_event(events, "patch", "put", "delete")
        assert name == "patch"
        assert patch["key"] == "bool-flag"
        assert (patch["value"], patch["variation"]) == (False, 0)
        assert patch["version"] > version

        assert deployment.api.delete(f"/api/v2/flags/{PROJECT}/number-flag").status_code == 204
        name, deleted = next_event(events, "patch", "put", "delete")
        assert name == "delete"
        assert deleted["key"] == "number-flag"
        assert deleted["version"] > put["number-flag"]["version"]


def test_segment_change_sends_a_whole_put(deployment: Deployment, http: httpx.Client) -> None:
    api = deployment.api
    ok(api.post(f"/api/v2/segments/{PROJECT}/production", json={"key": "beta", "name": "Beta"}))
    rule = {
        "variation": 0,
        "clauses": [{"attribute": "segmentMatch", "op": "segmentMatch", "values": ["beta"]}],
    }
    deployment.patch_flag(
        "string-flag", [{"op": "add", "path": f"{ENV_PATH}/rules/0", "value": rule}]
    )
    flag = ok(api.get(f"/api/v2/flags/{PROJECT}/string-flag"))
    version = flag["environments"]["production"]["version"]
    # the stream must open on the snapshot that already has the rule, or its put is a later one
    wait_until(
        lambda: deployment.evalx(USER)["string-flag"]["version"] == version,
        what="delivery has the flag with its new rule",
    )
    with http.stream("GET", f"/eval/{deployment.client_side_id}/{b64(USER)}") as stream:
        events = events_of(stream.iter_lines())
        _, put = next_event(events, "put")
        assert put["string-flag"]["value"] == "blue"
        add = [{"op": "add", "path": "/included/0", "value": "user-1"}]
        ok(api.patch(f"/api/v2/segments/{PROJECT}/production/beta", json=add))
        # the flag's version did not move, so a patch would be ignored: a put replaces all
        name, again = next_event(events, "patch", "put", "delete")
        assert name == "put"
        assert again["string-flag"]["value"] == "red"
        assert again["string-flag"]["version"] == put["string-flag"]["version"]


def test_mobile_report_stream_and_ping_streams(deployment: Deployment, http: httpx.Client) -> None:
    headers = {"Authorization": deployment.mobile_key, "Content-Type": "application/json"}
    with (
        http.stream("REPORT", "/meval", content=json.dumps(USER), headers=headers) as mobile,
        http.stream("GET", f"/ping/{deployment.client_side_id}") as ping,
        http.stream("GET", "/mping", headers={"Authorization": deployment.mobile_key}) as mping,
    ):
        mobile_events = events_of(mobile.iter_lines())
        _, put = next_event(mobile_events, "put")
        assert put["mobile-flag"]["value"] is True
        assert "server-flag" not in put
        pings = [events_of(ping.iter_lines()), events_of(mping.iter_lines())]
        for events in pings:
            assert next_event(events, "ping")[0] == "ping"  # on connect: poll once more
        wait_until(lambda: deployment.streams() >= 3, what="three streams registered")
        status = deployment.api.get("/status").json()["parts"]["delivery"]
        assert status["clientStreams"] == 3

        deployment.set_fallthrough("mobile-flag", 0)
        _, patch = next_event(mobile_events, "patch")
        assert (patch["key"], patch["value"]) == ("mobile-flag", False)
        for events in pings:
            assert next_event(events, "ping")[0] == "ping"


def test_browser_report_stream_gets_the_context_from_its_body(
    deployment: Deployment, http: httpx.Client
) -> None:
    url = f"/eval/{deployment.client_side_id}"
    headers = {"Content-Type": "application/json"}
    with http.stream("REPORT", url, content=json.dumps(USER), headers=headers) as stream:
        events = events_of(stream.iter_lines())
        _, put = next_event(events, "put")
        assert put["bool-flag"]["value"] is True
        deployment.set_fallthrough("bool-flag", 0)
        _, patch = next_event(events, "patch")
        assert (patch["key"], patch["value"]) == ("bool-flag", False)


def test_stream_with_reasons_patches_with_reasons(
    deployment: Deployment, http: httpx.Client
) -> None:
    url = f"/eval/{deployment.client_side_id}/{b64(USER)}?withReasons=true"
    with http.stream("GET", url) as stream:
        events = events_of(stream.iter_lines())
        _, put = next_event(events, "put")
        assert put["bool-flag"]["reason"] == {"kind": "FALLTHROUGH"}
        deployment.patch_flag(
            "bool-flag", [{"op": "replace", "path": f"{ENV_PATH}/on", "value": False}]
        )
        _, patch = next_event(events, "patch")
        assert patch["reason"] == {"kind": "OFF"}
