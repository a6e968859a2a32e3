"""Test support for the relay: `flagstaff serve` (the upstream) and `flagstaff relay` as real
processes on loopback ports they keep across restarts, the management calls that seed a project,
and the official LaunchDarkly Python SDK pointed at a relay.

Shared by the relay tests, the relay e2e test and bench/relay.py; asserts nothing about Flagstaff.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from ldclient.client import LDClient
from ldclient.config import Config
from servers import FlagstaffProcess, ServeProcess, free_port, serve_in_thread

ADMIN = "relay-test-admin-token-0123456789"
CATCH_UP_SECONDS = 30.0
"""How long a test waits for a relay to catch up (a change, a reconnect, a restart)."""


@dataclass(kw_only=True)
class Upstream(ServeProcess):
    """`flagstaff serve` (SQLite, in-process feed) with the test's admin token."""

    name: str = "flagstaff"
    admin_token: str | None = ADMIN


@dataclass
class Keys:
    sdk_key: str
    mobile_key: str
    client_side_id: str


@dataclass(kw_only=True)
class RelayProcess(FlagstaffProcess):
    """`flagstaff relay --config FILE`; `config` is the TOML text written before each start."""

    name: str = "relay"
    admin_token: str | None = ADMIN
    config: str = ""

    @property
    def config_path(self) -> Path:
        return self.data_dir / "relay.toml"

    def arguments(self) -> list[str]:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self.config, encoding="utf-8")
        return [
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


# the management API -----------------------------------------------------------------------------


def ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, f"{response.request.method} {response.url}: {response.text}"
    return response.json() if response.content else None


def admin_client(server: FlagstaffProcess) -> httpx.Client:
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
    stack: ExitStack | None = None

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
        self.stack = ExitStack()
        self.stack.enter_context(
            serve_in_thread(
                self.app, port=self.port, what="the event sink", lifespan="off", interface="asgi3"
            )
        )

    def stop(self) -> None:
        if self.stack is not None:
            self.stack.close()
            self.stack = None
