"""The official LaunchDarkly Node server SDK (`@launchdarkly/node-server-sdk`, pinned in
tests/e2e/node/package-lock.json) as a test drives it: `node tests/e2e/node/server_sdk_check.mjs`
evaluates on request over stdin and reports updates on stdout.

Test support shared by the Node SDK and relay end-to-end tests; asserts nothing about Flagstaff.
"""

from __future__ import annotations

import itertools
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.deadlines import Deadline, wait_until
from support.prerequisites import missing_prerequisite

NODE_DIR = Path(__file__).parent / "node"
SCRIPT = NODE_DIR / "server_sdk_check.mjs"
USER = {"kind": "user", "key": "user-1"}
DEADLINE = 10.0
"""Seconds any expected SDK output may take (a generous bound, not a latency claim)."""


def node_executable() -> str:
    """The `node` executable, once the official Node server SDK is installed (else a missing
    prerequisite)."""
    executable = shutil.which("node")
    if executable is None:
        missing_prerequisite("node is not installed (the official Node server SDK needs it)")
    if not (NODE_DIR / "node_modules" / "@launchdarkly" / "node-server-sdk").is_dir():
        missing_prerequisite("the Node SDK is not installed: run `make node-deps`")
    assert executable is not None
    return executable


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
        deadline = Deadline(DEADLINE)
        while True:
            try:
                record = self.lines.get(timeout=deadline.left())
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
        """Evaluate `flag` until the SDK serves `expected`."""
        wait_until(
            lambda: self.evaluate(flag)[flag] == expected,
            timeout=DEADLINE,
            what=f"the Node SDK to serve {flag} = {expected!r}",
            interval=0.02,
        )


def start_node_sdk(
    node: str, url: str, sdk_key: str, mode: str, *, diagnostic_seconds: int | None = None
) -> NodeSdk:
    """The SDK in `mode` (`stream` or `poll`); with `diagnostic_seconds` it sends events and
    diagnostics (a periodic one that often; 60 at least), else neither."""
    extra = [] if diagnostic_seconds is None else [str(diagnostic_seconds)]
    process = subprocess.Popen(
        [node, str(SCRIPT), url, sdk_key, mode, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=NODE_DIR,
    )
    sdk = NodeSdk(process)
    sdk.reader = threading.Thread(target=sdk.read, daemon=True)
    sdk.reader.start()
    return sdk


def stop_node_sdk(sdk: NodeSdk) -> None:
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
