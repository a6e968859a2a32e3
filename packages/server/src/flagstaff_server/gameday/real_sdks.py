"""Real SDKs in a game day, beside the lightweight fleet: the project's Python SDK (failing over
between the regions, streaming with polling fallback) and the official LaunchDarkly Python SDK
(streaming from one region), each asked for the probe flag on every sample.

A client that serves the code default has no data: the sentinel default tells it apart.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flagstaff_sdk import Client, Config, Endpoint, Timing

from flagstaff_server.gameday.fleet import ClientView
from flagstaff_server.gameday.topology import CONTEXT, PROBE_FLAG, Topology

DEFAULT = "__code-default__"


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
    client.wait_for_initialization(30)
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
    client = ldclient.client.LDClient(config=config, start_wait=30)
    context = ldclient.Context.create(CONTEXT["key"])
    view = ClientView(name="sdk-launchdarkly", kind="sdk-launchdarkly", region="a")

    def close() -> None:
        with contextlib.suppress(Exception):
            client.close()

    return RealSdk(view, lambda: _served(client.variation(PROBE_FLAG, context, DEFAULT)), close)
