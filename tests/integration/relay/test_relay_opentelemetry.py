"""`flagstaff relay` exports its delivery figures as OpenTelemetry metrics when the standard
`OTEL_*` variables ask, to the OTLP/HTTP receiver in the test (`support.otlp_receiver`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from relay_support import RelayProcess, relay_config
from support.deadlines import wait_until
from support.management import Keys
from support.otlp_receiver import ReceivedMetric, otlp_receiver
from support.processes import running

pytestmark = [pytest.mark.slow]

KEYS = Keys(sdk_key="sdk-relay-otel", mobile_key="mob-relay-otel", client_side_id="d" * 24)


def test_a_relay_exports_its_delivery_metrics_over_otlp(tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    flag = {"key": "banner", "version": 1, "on": True, "variations": [1, 2]}
    data.write_text(json.dumps({"flags": {"banner": {**flag, "fallthrough": {"variation": 0}}}}))
    config = relay_config(["http://127.0.0.1:9"], KEYS, extra=f'offline_file = "{data}"')
    with otlp_receiver() as receiver:
        relay = RelayProcess(
            data_dir=tmp_path / "relay",
            config=config,
            env={
                "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                "OTEL_METRIC_EXPORT_INTERVAL": "300",
            },
        )
        with running(relay):
            served = httpx.get(
                f"{relay.url}/sdk/latest-all", headers={"Authorization": KEYS.sdk_key}, timeout=10
            )
            assert served.status_code == 200, served.text
            assert "banner" in served.json()["flags"]

            def full_sends() -> ReceivedMetric | None:
                metric = receiver.received.latest("flagstaff.delivery.sends")
                if metric is None:
                    return None
                points = {
                    attributes["flagstaff.delivery.payload"]: value
                    for attributes, value in metric.points()
                }
                return metric if points.get("full", 0) >= 1 else None

            metric = wait_until(
                full_sends,
                what="the relay's full sends at the receiver",
                state=lambda: sorted({m.name for m in receiver.received.metrics()}),
            )
    assert metric.resource["flagstaff.role"] == "relay"
    assert metric.resource["service.name"] == "flagstaff"
    assert metric.scope == "flagstaff.delivery"
