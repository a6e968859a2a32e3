"""Test support for the relay: `flagstaff serve` (the upstream) and `flagstaff relay` as real
processes on loopback ports they keep across restarts, relay configuration, and an event upstream
that de-duplicates (management calls and the official SDK come from `support.management`).

Shared by the relay tests, the relay e2e test and bench/relay.py; asserts nothing about Flagstaff.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from support import management
from support.management import Keys
from support.ports import free_port
from support.processes import FlagstaffProcess, ServeProcess
from support.threaded_servers import serve_in_thread

ADMIN = "relay-test-admin-token-0123456789"
CATCH_UP_SECONDS = 30.0
"""How long a test waits for a relay to catch up (a change, a reconnect, a restart)."""


@dataclass(kw_only=True)
class Upstream(ServeProcess):
    """`flagstaff serve` (SQLite, in-process feed) with the test's admin token."""

    name: str = "flagstaff"
    admin_token: str | None = ADMIN


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
    upstream_timing: str = FAST_UPSTREAM,
) -> str:
    """The relay's TOML for one environment; `upstream_timing` "" leaves the SDK's defaults."""
    urls = ", ".join(f'"{url}"' for url in upstream)
    return f"""
[relay]
upstream = [{urls}]
heartbeat_seconds = 5
{upstream_timing}
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


def admin_client(server: FlagstaffProcess) -> httpx.Client:
    """The management API of `server` with this module's admin token."""
    return management.admin_client(server.url, ADMIN)


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
