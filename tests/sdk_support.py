"""Test support for the SDK against real delivery nodes: fast timing constants, a seeded
environment and a client config. Asserts nothing itself."""

from __future__ import annotations

from typing import Any

from delivery_support import (
    ENVIRONMENT,
    SDK_KEY,
    Outbox,
    RunningServer,
    environment,
    flag,
    memory_backend,
    segment,
    segment_rule_flag,
)
from flagstaff_sdk import Config, Context, Timing
from flagstaff_server.delivery import DeliveryConfig
from flagstaff_server.services.ports import ChangeFeed
from support.deadlines import wait_until

FAST = Timing(
    initial_retry_delay=0.05,
    max_retry_delay=0.2,
    reset_after=5.0,
    extended_retry_delay=0.3,
    extended_max_retry_delay=0.6,
    poll_interval=0.1,
    poll_fallback_after=1.0,
    probe_interval=0.2,
    connect_timeout=1.0,
    read_timeout=1.0,
    stream_read_timeout=1.0,
    cache_write_delay=0.02,
)
"""Everything in tenths of seconds; the stream read timeout is above the test heartbeat."""

SERVER = DeliveryConfig(heartbeat_seconds=0.2, tick_seconds=0.05, retry_hint_ms=50)
USER = Context.create("user-1")


def seeded() -> tuple[ChangeFeed, Outbox]:
    _store, feed, outbox = memory_backend()
    outbox.write("environment", ENVIRONMENT, environment())
    outbox.write("flag", "a", flag("a", variations=("off", "on-1")))
    outbox.write("segment", "beta", segment("beta", included=("user-1",)))
    outbox.write("flag", "in-beta", segment_rule_flag("in-beta", "beta"))
    return feed, outbox


def current(server: RunningServer) -> RunningServer:
    wait_until(lambda: server.call(lambda: server.node.current), what="node current")
    return server


def sdk_config(url: str | None = None, **extra: Any) -> Config:
    settings: dict[str, Any] = {
        "sdk_key": SDK_KEY,
        "send_events": False,
        "init_timeout": 5.0,
        "timing": FAST,
    }
    if url is not None:
        settings["base_uri"] = url
    settings.update(extra)
    return Config(**settings)


def set_flag_value(outbox: Outbox, version: int, key: str = "a") -> str:
    """Publish flag `key` at `version` serving `"v<version>"`; returns that value."""
    value = f"v{version}"
    outbox.write("flag", key, flag(key, version, variations=("off", value)))
    return value
