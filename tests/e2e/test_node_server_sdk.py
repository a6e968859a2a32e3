"""The official LaunchDarkly Node server SDK (`@launchdarkly/node-server-sdk`, pinned in
tests/e2e/node/package-lock.json) pointed at the whole server: flags and segments made through the
management API evaluate as expected, and a targeting change, a segment change and a deletion reach
a streaming SDK. The SDK runs in `node tests/e2e/node/server_sdk_check.mjs`, driven over stdin."""

from __future__ import annotations

import asyncio
import itertools
import json
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from delivery_support import free_port, wait_until
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from prerequisites import missing_prerequisite

NODE_DIR = Path(__file__).parent / "node"
SCRIPT = NODE_DIR / "server_sdk_check.mjs"
ADMIN = "e2e-node-admin-token-0123456789"
USER = {"kind": "user", "key": "user-1"}
DEADLINE = 10.0
"""Seconds any expected SDK output may take (a generous bound, not a latency claim)."""


@dataclass
class NodeSdk:
    """One `server_sdk_check.mjs` process: evaluations on request, announced updates collected."""

    process: subprocess.Popen[str]
    lines: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)
    updates: list[str] = field(default_factory=list)
    ids: Iterator[int] = field(default_factory=itertools.count)
    reader: threading.Thread | None = None

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def next(self, event: str) -> dict[str, Any]:
        """The next record of kind `event`; updates met on the way are collected."""
        deadline = time.monotonic() + DEADLINE
        while True:
            try:
                record = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {event!r} from the Node SDK within {DEADLINE}s") from None
            if record is None:
                raise AssertionError(f"the Node SDK process ended before {event!r}")
            if record["event"] == "update":
                self.updates.append(record["key"])
            if record["event"] == event:
                return record

    def evaluate(self, *flags: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        request_id = next(self.ids)
        request = {"id": request_id, "flags": flags, "context": USER, "default": "default"}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        record = self.next("evaluation")
        assert record["id"] == request_id
        values: dict[str, Any] = record["values"]
        return values

    def wait_for(self, flag: str, expected: Any) -> None:
        deadline = time.monotonic() + DEADLINE
        while (value := self.evaluate(flag)[flag]) != expected:
            if time.monotonic() > deadline:
                raise AssertionError(f"{flag} is {value!r}, not {expected!r}, after {DEADLINE}s")
            time.sleep(0.02)


@pytest.fixture
def node() -> str:
    executable = shutil.which("node")
    if executable is None:
        missing_prerequisite("node is not installed (the official Node server SDK needs it)")
    if not (NODE_DIR / "node_modules" / "@launchdarkly" / "node-server-sdk").is_dir():
        missing_prerequisite("the Node SDK is not installed: run `make node-deps`")
    assert executable is not None
    return executable


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path, admin_token=ADMIN, seed_demo=False)
    app = Flagstaff(settings, announce=lambda line: None)
    port = free_port()
    uvicorn_server = uvicorn.Server(
        uvicorn.Config(app.asgi, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=lambda: asyncio.run(uvicorn_server.serve()), daemon=True)
    thread.start()
    wait_until(lambda: uvicorn_server.started, what="server start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=15)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


def _seed(api: httpx.Client) -> str:
    """Project `shop` (environment `production`), flag `banner` (off), segment `beta` (empty) and
    flag `beta-only` serving true to members of `beta`; returns the SDK key."""
    environments = [{"key": "production", "name": "Production", "color": "417505"}]
    body = {"key": "shop", "name": "Shop", "environments": environments}
    sdk_key: str = _ok(api.post("/api/v2/projects", json=body))["environments"][0]["apiKey"]
    text = [{"value": "on"}, {"value": "off"}]
    _ok(api.post("/api/v2/flags/shop", json={"key": "banner", "name": "B", "variations": text}))
    _ok(api.post("/api/v2/segments/shop/production", json={"key": "beta", "name": "Beta"}))
    booleans = [{"value": False}, {"value": True}]
    flag = {"key": "beta-only", "name": "B", "variations": booleans}
    _ok(api.post("/api/v2/flags/shop", json=flag))
    clause = {"attribute": "segmentMatch", "op": "segmentMatch", "values": ["beta"]}
    env = "/environments/production"
    patch = [
        {"op": "replace", "path": f"{env}/on", "value": True},
        {"op": "replace", "path": f"{env}/fallthrough", "value": {"variation": 0}},
        {"op": "add", "path": f"{env}/rules/0", "value": {"variation": 1, "clauses": [clause]}},
    ]
    _ok(api.patch("/api/v2/flags/shop/beta-only", json=patch))
    return sdk_key


def _start(node: str, url: str, sdk_key: str, mode: str) -> NodeSdk:
    process = subprocess.Popen(
        [node, str(SCRIPT), url, sdk_key, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=NODE_DIR,
    )
    sdk = NodeSdk(process)
    sdk.reader = threading.Thread(target=sdk.read, daemon=True)
    sdk.reader.start()
    return sdk


def _stop(sdk: NodeSdk) -> None:
    assert sdk.process.stdin is not None
    sdk.process.stdin.close()
    try:
        sdk.process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        sdk.process.kill()
        sdk.process.wait(timeout=DEADLINE)
    assert sdk.reader is not None
    assert sdk.process.stdout is not None
    sdk.reader.join(timeout=DEADLINE)
    sdk.process.stdout.close()


def test_node_streaming_sdk_follows_flags_segments_and_deletions(node: str, server: str) -> None:
    with httpx.Client(base_url=server, headers={"Authorization": ADMIN}, timeout=10) as api:
        sdk_key = _seed(api)
        sdk = _start(node, server, sdk_key, "stream")
        try:
            assert sdk.next("ready")["initialized"] is True
            assert sdk.evaluate("banner", "beta-only", "missing") == {
                "banner": "off",
                "beta-only": False,
                "missing": "default",
            }

            patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
            _ok(api.patch("/api/v2/flags/shop/banner", json=patch))
            sdk.wait_for("banner", "on")

            include = [{"op": "add", "path": "/included/0", "value": "user-1"}]
            _ok(api.patch("/api/v2/segments/shop/production/beta", json=include))
            sdk.wait_for("beta-only", True)

            assert api.delete("/api/v2/flags/shop/banner").status_code == 204
            sdk.wait_for("banner", "default")
            # the SDK announced each change to its listeners, as applications see them
            assert {"banner", "beta-only"} <= set(sdk.updates)
        finally:
            _stop(sdk)
        assert sdk.process.returncode == 0


def test_node_polling_sdk_initializes_and_evaluates(node: str, server: str) -> None:
    with httpx.Client(base_url=server, headers={"Authorization": ADMIN}, timeout=10) as api:
        sdk_key = _seed(api)
        patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
        _ok(api.patch("/api/v2/flags/shop/banner", json=patch))
    sdk = _start(node, server, sdk_key, "poll")
    try:
        assert sdk.next("ready")["initialized"] is True
        assert sdk.evaluate("banner", "beta-only") == {"banner": "on", "beta-only": False}
    finally:
        _stop(sdk)
    assert sdk.process.returncode == 0


def test_node_sdk_with_an_unknown_key_does_not_initialize(node: str, server: str) -> None:
    sdk = _start(node, server, "sdk-0000-not-a-real-key", "stream")
    try:
        assert sdk.next("ready")["initialized"] is False
        assert sdk.evaluate("banner") == {"banner": "default"}
    finally:
        _stop(sdk)
