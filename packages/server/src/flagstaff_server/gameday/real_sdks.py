"""Real SDKs in a game day, beside the lightweight fleet: the project's Python SDK (failing over
between the regions, streaming with polling fallback), the official LaunchDarkly Python SDK
(streaming from A) and the official Node server SDK (streaming from B, in a `node` child
process), each asked for the probe flag on every sample.

A client that serves the code default has no data: the sentinel default tells it apart.
`missing()` names the real SDKs this machine cannot run, and why.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flagstaff_sdk import Client, Config, Endpoint, Timing

from flagstaff_server.gameday.fleet import ClientView
from flagstaff_server.gameday.topology import CONTEXT, PROBE_FLAG, Topology

DEFAULT = "__code-default__"
INIT_SECONDS = 30.0
"""How long each SDK may take to initialise (then it runs on, serving what it holds)."""
NODE_SCRIPT = Path(__file__).with_name("node_sdk.mjs")
NODE_PACKAGE = Path("node_modules", "@launchdarkly", "node-server-sdk")
NODE_SDK_DIR_VARIABLE = "FLAGSTAFF_NODE_SDK_DIR"
"""A directory holding node_modules/@launchdarkly/node-server-sdk; by default the repository's
tests/e2e/node, installed from its lockfile by `make node-deps`."""
NODE_EVALUATE_MS = 50
"""How often the Node process evaluates the probe flag (it reports changes only)."""


@dataclass
class RealSdk:
    view: ClientView
    evaluate: Callable[[], str | None]
    close: Callable[[], None]

    def sample(self) -> None:
        try:
            value = self.evaluate()
        except Exception:  # an SDK failing to evaluate serves the default
            value = None
        self.view.hold(value)


def _served(value: Any) -> str | None:
    return None if value == DEFAULT else str(value)


def flagstaff_sdk(topology: Topology) -> RealSdk:
    """The project's SDK with B preferred and A as its failover region."""
    timing = Timing(
        initial_retry_delay=0.2,
        max_retry_delay=2.0,
        poll_interval=1.0,
        poll_fallback_after=2.0,
        failover_after_failures=2,
        probe_interval=5.0,
        read_timeout=5.0,
        stream_read_timeout=5.0,
    )
    endpoints = (
        Endpoint.at(topology.b.delivery_url, name="b"),
        Endpoint.at(topology.a.delivery_url, name="a"),
    )
    client = Client(
        Config(topology.keys.sdk_key, endpoints=endpoints, send_events=False, timing=timing)
    )
    client.wait_for_initialization(INIT_SECONDS)
    view = ClientView(name="sdk-flagstaff", kind="sdk-flagstaff", region="b")
    return RealSdk(
        view, lambda: _served(client.variation(PROBE_FLAG, CONTEXT, DEFAULT)), client.close
    )


def official_sdk(topology: Topology) -> RealSdk | None:
    """The official LaunchDarkly Python SDK (`launchdarkly-server-sdk`) streaming from A's
    delivery node; None when it is not installed."""
    if importlib.util.find_spec("ldclient") is None:
        return None
    ldclient: Any = importlib.import_module("ldclient")
    config_module: Any = importlib.import_module("ldclient.config")
    url = topology.a.delivery_url
    config = config_module.Config(
        topology.keys.sdk_key,
        base_uri=url,
        stream_uri=url,
        events_uri=url,
        send_events=False,
        diagnostic_opt_out=True,
        initial_reconnect_delay=0.2,
    )
    client = ldclient.client.LDClient(config=config, start_wait=INIT_SECONDS)
    context = ldclient.Context.create(CONTEXT["key"])
    view = ClientView(name="sdk-launchdarkly", kind="sdk-launchdarkly", region="a")

    def close() -> None:
        with contextlib.suppress(Exception):
            client.close()

    return RealSdk(view, lambda: _served(client.variation(PROBE_FLAG, context, DEFAULT)), close)


def _node_sdk_dir() -> Path | None:
    named = os.environ.get(NODE_SDK_DIR_VARIABLE)
    if named:
        return Path(named) if (Path(named) / NODE_PACKAGE).is_dir() else None
    for root in (Path.cwd(), *Path(__file__).resolve().parents):
        candidate = root / "tests" / "e2e" / "node"
        if (candidate / NODE_PACKAGE).is_dir():
            return candidate
    return None


def missing() -> list[str]:
    """Why each real SDK this machine cannot run is missing (empty when all three run)."""
    reasons = []
    if importlib.util.find_spec("ldclient") is None:
        reasons.append("the official Python SDK: `launchdarkly-server-sdk` is not installed")
    if shutil.which("node") is None:
        reasons.append("the official Node server SDK: `node` is not on PATH")
    elif _node_sdk_dir() is None:
        reasons.append(
            "the official Node server SDK: @launchdarkly/node-server-sdk is not installed"
            f" (run `make node-deps`, or name its directory in {NODE_SDK_DIR_VARIABLE})"
        )
    return reasons


class _NodeProcess:
    """One `node node_sdk.mjs` process and the last value it reported; None (no data) until
    the first report and once the process has ended."""

    def __init__(self, argv: list[str]) -> None:
        self.value: str | None = None
        self.reported = threading.Event()
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.reader = threading.Thread(target=self._read, name="node-sdk", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                self.value = _served(json.loads(line)["value"])
                if self.value is not None:
                    self.reported.set()
        self.value = None

    def close(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.reader.join(timeout=10)


def node_sdk(topology: Topology) -> RealSdk | None:
    """The official Node server SDK streaming from B's delivery node; None when `node` or the
    package is missing (`missing()` says which)."""
    node, sdk_dir = shutil.which("node"), _node_sdk_dir()
    if node is None or sdk_dir is None:
        return None
    argv = [node, str(NODE_SCRIPT), str(sdk_dir), topology.b.delivery_url, topology.keys.sdk_key]
    argv += [PROBE_FLAG, str(CONTEXT["key"]), DEFAULT, str(NODE_EVALUATE_MS)]
    process = _NodeProcess(argv)
    ends = time.monotonic() + INIT_SECONDS
    while not process.reported.wait(0.1) and time.monotonic() < ends:
        if process.process.poll() is not None:
            break
    view = ClientView(name="sdk-node", kind="sdk-node", region="b")
    return RealSdk(view, lambda: process.value, process.close)
