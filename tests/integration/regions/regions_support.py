"""Test support for two regions: the product's private PostgreSQL cluster (primary in region A,
hot standby in region B) as a context manager that skips locally (fails in CI) when the server
binaries are missing, and a recorder of what a delivery node's SSE streams send.

Shared by the tests in this directory; asserts nothing about Flagstaff itself.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from flagstaff_server.regions.postgres_cluster import (
    ClusterError,
    PostgresBinaries,
    PostgresCluster,
    run_as_user,
)
from support.deadlines import wait_until
from support.prerequisites import missing_prerequisite


@contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A cluster of private servers (none started yet), removed at the end."""
    try:
        binaries = PostgresBinaries.find()
        run_as_user()
    except ClusterError as exc:
        missing_prerequisite(str(exc))
        raise  # unreachable: missing_prerequisite skips or fails
    with PostgresCluster(binaries=binaries) as cluster:
        yield cluster


# streams on the wire ------------------------------------------------------------------------


@dataclass
class StreamRecorder:
    """Reads one SSE stream (`path` of a delivery node, with an SDK key) in a thread of its own,
    reconnecting when it ends, and keeps every event as (name, data): what an SDK connected
    throughout was sent. Needs a short heartbeat on the node, since it stops between events."""

    url: str
    sdk_key: str
    path: str = "/all"
    events: list[tuple[str, Any]] = field(default_factory=list)
    connections: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> StreamRecorder:
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"record {self.path}")
        self._thread.start()
        return self

    def wait_for_data(self, *, timeout: float = 30.0) -> StreamRecorder:
        """Block until the stream has sent its first payload (FDv1 `put`, FDv2
        `payload-transferred`), so that what follows reaches it as changes."""
        wait_until(
            lambda: any(name in ("put", "payload-transferred") for name, _ in self.events),
            timeout=timeout,
            what=f"the first payload on {self.path}",
        )
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            assert not self._thread.is_alive(), f"the {self.path} recorder did not stop"

    def _run(self) -> None:
        headers = {"Authorization": self.sdk_key}
        timeout = httpx.Timeout(5.0, read=10.0)
        while not self._stop.is_set():
            try:
                with httpx.stream(
                    "GET", f"{self.url}{self.path}", headers=headers, timeout=timeout
                ) as stream:
                    if stream.status_code != 200:
                        self._stop.wait(0.5)
                        continue
                    self.connections += 1
                    self._read(stream.iter_lines())
            except httpx.HTTPError:
                self._stop.wait(0.5)

    def _read(self, lines: Iterator[str]) -> None:
        name = ""
        for line in lines:
            if self._stop.is_set():
                return
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and name:
                self.events.append((name, json.loads(line.split(":", 1)[1].strip())))
                name = ""

    def flag_versions(self, key: str) -> list[tuple[str, int]]:
        """(event, version) of flag `key` in every FDv1 `put` and `patch`, in order."""
        found: list[tuple[str, int]] = []
        for name, data in self.events:
            if name == "put" and key in data["data"]["flags"]:
                found.append(("put", data["data"]["flags"][key]["version"]))
            elif name == "patch" and data["path"] == f"/flags/{key}":
                found.append(("patch", data["data"]["version"]))
        return found

    def transferred(self) -> list[int]:
        """The `version` of every FDv2 `payload-transferred`, in order."""
        return [data["version"] for name, data in self.events if name == "payload-transferred"]
