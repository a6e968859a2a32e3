"""Test support for the relay: `flagstaff serve` (the upstream) and `flagstaff relay` as real
processes on loopback ports they keep across restarts, the management calls that seed a project,
and the official LaunchDarkly Python SDK pointed at a relay.

Shared by the relay tests, the relay e2e test and bench/relay.py; asserts nothing about Flagstaff.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from delivery_support import free_port
from ldclient.client import LDClient
from ldclient.config import Config

ADMIN = "relay-test-admin-token-0123456789"
START_TIMEOUT = 90.0
"""A cold start on a busy two-core machine takes several seconds."""


def wait_for(predicate: Callable[[], bool], *, timeout: float = 30.0, what: str) -> None:
    """Poll `predicate` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def flagstaff_command() -> list[str]:
    script = Path(sys.executable).with_name("flagstaff")
    if script.exists():
        return [str(script)]
    code = "import sys; from flagstaff_server.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code]


class PortTaken(Exception):
    """The process could not listen: another process took its port first."""


@dataclass
class Process:
    """One `flagstaff` process on a fixed port (kept across restarts); `/status` answers once up."""

    data_dir: Path
    name: str = "process"
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    started_once: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / f"{self.name}.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    def launch(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "FLAGSTAFF_ADMIN_TOKEN": ADMIN},
            )

    def start(self) -> None:
        self.launch()
        self.wait_started()

    def wait_started(self, timeout: float = START_TIMEOUT) -> None:
        """Wait for this process to listen on its port and answer `/status`. A first start whose
        port another process took in the meantime (free_port is only a guess on a busy machine)
        moves to a new port; a restart keeps its port, since others were told it."""
        for _attempt in range(3):
            try:
                wait_for(self.answers, timeout=timeout, what=f"{self.name} to start")
            except PortTaken:
                if self.started_once:
                    raise AssertionError(f"{self.name}: port {self.port} was taken") from None
                self.port = free_port()
                self.launch()
                continue
            except AssertionError as exc:
                raise AssertionError(f"{exc}; log: {self.log()}") from None
            self.started_once = True
            return
        raise AssertionError(f"{self.name} found no free port")

    def answers(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            if "address already in use" in self.log().lower():
                raise PortTaken(self.port)
            raise AssertionError(f"{self.name} exited: {self.log()}")
        if not self.listening():
            return False  # whatever answers on the port is not this process
        try:
            return httpx.get(f"{self.url}/status", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def listening(self) -> bool:
        assert self.process is not None
        try:
            connections = psutil.Process(self.process.pid).net_connections(kind="tcp")
        except psutil.Error:
            return False
        return any(
            c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == self.port
            for c in connections
        )

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(f"{self.url}/status", timeout=5).json()
        return body

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def kill(self) -> None:
        """SIGKILL: no clean shutdown (a crash, a lost machine)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no log)"


@dataclass
class Upstream(Process):
    """`flagstaff serve` (SQLite, in-process feed) with the test's admin token."""

    name: str = "flagstaff"

    def command(self) -> list[str]:
        return [
            *flagstaff_command(),
            "serve",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            "--no-demo",
            "--shutdown-seconds",
            "1",
        ]


@dataclass
class Keys:
    sdk_key: str
    mobile_key: str
    client_side_id: str


@dataclass
class RelayProcess(Process):
    """`flagstaff relay --config FILE`; `config` is the TOML text written before each start."""

    name: str = "relay"
    config: str = ""

    @property
    def config_path(self) -> Path:
        return self.data_dir / "relay.toml"

    def command(self) -> list[str]:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self.config, encoding="utf-8")
        return [
            *flagstaff_command(),
            "relay",
            "--config",
            str(self.config_path),
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir / "state"),
            "--shutdown-seconds",
            "1",
        ]


FAST_UPSTREAM = """
[relay.upstream_timing]
initial_retry_delay = 0.1
max_retry_delay = 0.5
poll_interval = 1.0
poll_fallback_after = 1.0
initial_poll_after = 0.5
"""
"""Short retry and poll delays so a test sees reconnects within seconds."""


def relay_config(
    upstream: list[str],
    keys: Keys,
    *,
    name: str = "production",
    extra: str = "",
    events: str = "",
) -> str:
    urls = ", ".join(f'"{url}"' for url in upstream)
    return f"""
[relay]
upstream = [{urls}]
heartbeat_seconds = 5
{FAST_UPSTREAM}
[events]
retry_seconds = 0.1
retry_max_seconds = 0.5
{events}

[environments.{name}]
sdk_key = "{keys.sdk_key}"
mobile_key = "{keys.mobile_key}"
client_side_id = "{keys.client_side_id}"
{extra}
"""


@contextmanager
def running(*processes: Process) -> Iterator[None]:
    """The processes, started side by side, stopped at the end (even after a failure)."""
    try:
        for process in processes:
            process.launch()
        for process in processes:
            process.wait_started()
        yield
    finally:
        for process in processes:
            process.stop()


# the management API -----------------------------------------------------------------------------


def ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, f"{response.request.method} {response.url}: {response.text}"
    return response.json() if response.content else None


def admin_client(server: Process) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": ADMIN}, timeout=30)


def create_project(api: httpx.Client, key: str = "shop") -> Keys:
    """A project with one environment `production`; returns its credentials."""
    environments = [{"key": "production", "name": "Production", "color": "417505"}]
    body = {"key": key, "name": key.title(), "environments": environments}
    env = ok(api.post("/api/v2/projects", json=body))["environments"][0]
    return Keys(sdk_key=env["apiKey"], mobile_key=env["mobileKey"], client_side_id=env["_id"])


def create_flag(api: httpx.Client, key: str, project: str = "shop") -> None:
    """A flag with variations "on" and "off": new flags are off (serving "off")."""
    variations = [{"value": "on"}, {"value": "off"}]
    body = {"key": key, "name": key, "variations": variations}
    ok(api.post(f"/api/v2/flags/{project}", json=body))


def switch(api: httpx.Client, key: str, *, on: bool, project: str = "shop") -> None:
    patch = [{"op": "replace", "path": "/environments/production/on", "value": on}]
    ok(api.patch(f"/api/v2/flags/{project}/{key}", json=patch))


def delete_flag(api: httpx.Client, key: str, project: str = "shop") -> None:
    response = api.delete(f"/api/v2/flags/{project}/{key}")
    assert response.status_code == 204, response.text


def served_flags(url: str, sdk_key: str) -> dict[str, Any]:
    """The flags `/sdk/latest-all` serves, failing on anything but 200."""
    response = httpx.get(f"{url}/sdk/latest-all", headers={"Authorization": sdk_key}, timeout=10)
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    flags: dict[str, Any] = response.json()["flags"]
    return flags


def is_on(url: str, sdk_key: str, key: str) -> bool:
    flag = served_flags(url, sdk_key).get(key)
    return bool(flag and flag["on"])


# the official SDK -------------------------------------------------------------------------------


def sdk_client(url: str, sdk_key: str, **options: Any) -> LDClient:
    settings: dict[str, Any] = {"send_events": False, "diagnostic_opt_out": True, **options}
    config = Config(sdk_key, base_uri=url, stream_uri=url, events_uri=url, **settings)
    return LDClient(config=config, start_wait=30)


# an event upstream that de-duplicates --------------------------------------------------------


@dataclass
class EventSink:
    """A LaunchDarkly-style event receiver on a fixed loopback port that keeps the first payload
    of each `X-LaunchDarkly-Payload-ID` (what a de-duplicating upstream processes) and counts
    every delivery. Started and stopped by the test, to be "down" in between."""

    port: int = field(default_factory=free_port)
    received: list[tuple[str, str, str]] = field(default_factory=list)
    """(path, payload id, body) of every request that reached it."""
    processed: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)
    """payload id → (path, Authorization, body) of the first delivery."""
    server: Any = None
    thread: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        payload_id = headers.get("x-launchdarkly-payload-id", "")
        self.received.append((scope["path"], payload_id, body.decode()))
        if payload_id not in self.processed:
            self.processed[payload_id] = (scope["path"], headers.get("authorization", ""), body)
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def start(self) -> None:
        import asyncio
        import threading

        import uvicorn

        self.server = uvicorn.Server(
            uvicorn.Config(
                self.app, host="127.0.0.1", port=self.port, log_level="warning", interface="asgi3"
            )
        )

        def run() -> None:
            asyncio.run(self.server.serve())

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started, what="the event sink")

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
            self.thread.join(timeout=15)
            self.server = None
