"""The SDK fleet view fed by real SDKs' diagnostic events: the official LaunchDarkly Python SDK
(ldclient 9.18.4), the official Node server SDK and Flagstaff's own, streaming from the whole
server in this process. It captures what the official SDKs send (the raw export), shows each
instance's data-source state and data age filled in, and instances aging out: Flagstaff's own at
once when it closes, the LaunchDarkly ones after two of their diagnostic intervals without a
report, seen by moving the server's clock forward instead of waiting.

The official SDKs send their first periodic diagnostic one interval after they start, and their
shortest interval is 60 s: the test waits for that once (the three SDKs run side by side)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from flagstaff_sdk import Client
from flagstaff_sdk import Config as OwnConfig
from flagstaff_sdk.events import EventOptions, sink_factory
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from ldclient.client import LDClient
from ldclient.config import Config
from node_sdk import start_node_sdk, stop_node_sdk
from support.deadlines import wait_until
from support.management import ok
from support.threaded_servers import serve_in_thread

pytestmark = pytest.mark.slow

ADMIN = "e2e-fleet-admin-token-0123456789"
INTERVAL_SECONDS = 60
"""The official SDKs' diagnostic interval: their minimum."""
OFFICIAL = ("python-server-sdk", "@launchdarkly/node-server-sdk")
OWN = "flagstaff-python-sdk"


class ShiftedClock:
    """The control plane's clock (the fleet view's now): the real time plus `offset`."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def fleet(api: httpx.Client) -> dict[str, Any]:
    answer: dict[str, Any] = ok(api.get("/api/v2/insights/shop/production/sdk-instances"))
    return answer


def by_sdk(api: httpx.Client) -> dict[str, dict[str, Any]]:
    return {item["sdk"]["name"]: item for item in fleet(api)["items"]}


def states(api: httpx.Client) -> dict[str, str]:
    return {name: item["dataSourceState"] for name, item in by_sdk(api).items()}


def test_official_and_own_sdks_fill_the_fleet_view_and_age_out(node: str, tmp_path: Path) -> None:
    clock = ShiftedClock()
    settings = Settings(data_dir=tmp_path, admin_token=ADMIN, seed_demo=False)
    app = Flagstaff(settings, clock=clock, announce=lambda line: None)
    with (
        serve_in_thread(app.asgi, what="flagstaff", stop_timeout=20) as server,
        httpx.Client(base_url=server.url, headers={"Authorization": ADMIN}, timeout=10) as api,
    ):
        url = server.url
        environments = [{"key": "production", "name": "Production", "color": "417505"}]
        project = {"key": "shop", "name": "Shop", "environments": environments}
        sdk_key: str = ok(api.post("/api/v2/projects", json=project))["environments"][0]["apiKey"]

        official = LDClient(
            config=Config(
                sdk_key,
                base_uri=url,
                stream_uri=url,
                events_uri=url,
                diagnostic_recording_interval=INTERVAL_SECONDS,
            ),
            start_wait=30,
        )
        node_sdk = start_node_sdk(node, url, sdk_key, "stream", diagnostic_seconds=INTERVAL_SECONDS)
        # its default interval (15 minutes): its first report must not wait for it
        own = Client(OwnConfig(sdk_key, base_uri=url, event_sink=sink_factory(EventOptions())))
        try:
            assert official.is_initialized()
            assert node_sdk.next("ready")["initialized"] is True
            assert own.wait_for_initialization(30)

            # Flagstaff's own SDK reports as soon as its stream is up; the official ones have
            # only said they started (diagnostic-init), and when their first report is due
            wait_until(
                lambda: set(states(api)) == {*OFFICIAL, OWN} and states(api)[OWN] == "valid",
                timeout=30,
                what="three instances, the own SDK valid",
                state=lambda: states(api),
                interval=0.2,
            )
            early = by_sdk(api)
            assert (early[OWN]["dataAgeMs"], early[OWN]["dataSource"]) == (0, "stream")
            for name in OFFICIAL:
                item = early[name]
                if item["dataSourceState"] == "unknown":  # not reported yet (a slow start)
                    assert item["nextReportBy"] == item["lastSeen"] + INTERVAL_SECONDS * 1000
                assert item["diagnosticIntervalMs"] == INTERVAL_SECONDS * 1000

            wait_until(
                lambda: set(states(api).values()) == {"valid"},
                timeout=INTERVAL_SECONDS + 45,
                what="the official SDKs' first periodic diagnostics",
                state=lambda: states(api),
                interval=0.5,
            )
            running = fleet(api)
            assert (running["running"], running["stopped"], running["stale"]) == (3, 0, 0)
            assert all(item["dataAgeMs"] == 0 for item in running["items"])
            captured = capture(api, by_sdk(api))
        finally:
            own.close()
            official.close()
            stop_node_sdk(node_sdk)

        # what the official SDKs send, as captured
        for name in OFFICIAL:
            init, periodic = captured[name]
            assert init["configuration"]["diagnosticRecordingIntervalMillis"] == 60_000
            assert init["configuration"]["streamingDisabled"] is False
            assert {"dataSinceDate", "droppedEvents", "streamInits"} <= set(periodic)
            assert "dataSource" not in periodic
            assert "closing" not in periodic
            (attempt,) = periodic["streamInits"]
            assert set(attempt) == {"timestamp", "durationMillis", "failed"}
            assert attempt["failed"] is False

        # the own SDK said it was closing: stopped at once; the official ones said nothing
        wait_until(
            lambda: states(api)[OWN] == "stopped",
            timeout=20,
            what="the own SDK's closing report",
            state=lambda: states(api),
            interval=0.2,
        )
        assert by_sdk(api)[OWN]["stoppedReason"] == "closed"
        assert all(states(api)[name] == "valid" for name in OFFICIAL)

        # two intervals without a report: stopped, neither current nor stale
        clock.offset = timedelta(seconds=2 * INTERVAL_SECONDS + 5)
        aged = fleet(api)
        assert {item["dataSourceState"] for item in aged["items"]} == {"stopped"}
        assert {by_sdk(api)[name]["stoppedReason"] for name in OFFICIAL} == {"silent"}
        assert (aged["running"], aged["stopped"], aged["stale"]) == (0, 3, 0)


def capture(api: httpx.Client, instances: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per official SDK: its diagnostic-init and its first periodic diagnostic, as it sent them."""
    lines = api.get("/api/v2/insights/shop/production/events").content.splitlines()
    events = [orjson.loads(line) for line in lines]
    found: dict[str, Any] = {}
    for name in OFFICIAL:
        ident = instances[name]["instanceId"]
        mine = [e for e in events if e.get("id", {}).get("diagnosticId") == ident]
        init = next(e for e in mine if e["kind"] == "diagnostic-init")
        periodic = next(e for e in mine if e["kind"] == "diagnostic")
        found[name] = (init, periodic)
    return found
