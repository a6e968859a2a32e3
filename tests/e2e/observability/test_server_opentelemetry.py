"""`flagstaff serve` exporting OpenTelemetry traces and metrics, configured only by the standard
`OTEL_*` variables, to an OTLP/HTTP receiver in the test (`support.otlp_receiver`, decoding with
opentelemetry-proto): a management API request arrives as a server span with the HTTP
conventions' attributes and the store's SQL statements as its client spans; delivery and
ingestion figures arrive as metrics. Without the variables the server's modules load no
OpenTelemetry export.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.deadlines import wait_until
from support.management import admin_client, create_project, served_flags
from support.otlp_receiver import OtlpReceiver, ReceivedMetric, ReceivedSpan, otlp_receiver
from support.processes import ServeProcess, running

pytestmark = [pytest.mark.slow]

TOKEN = "api-otel-admin"
CALLER_TRACE = "5b8efff798038103d269b633813fc60c"
CALLER_SPAN = "eee19b7ec3c1b174"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as running_receiver:
        yield running_receiver


def otel_environment(receiver: OtlpReceiver) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "300",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test",
    }


def span_named(receiver: OtlpReceiver, name: str, **attributes: Any) -> ReceivedSpan:
    def found() -> ReceivedSpan | None:
        for span in receiver.received.spans():
            if span.name == name and all(
                span.attributes.get(k) == v for k, v in attributes.items()
            ):
                return span
        return None

    return wait_until(
        found,
        what=f"span {name!r} with {attributes} at the receiver",
        state=lambda: sorted({s.name for s in receiver.received.spans()}),
    )


def metric_where(
    receiver: OtlpReceiver, name: str, attributes: dict[str, Any], at_least: float
) -> ReceivedMetric:
    """The latest export of `name` once a point with (at least) `attributes` reaches
    `at_least`."""

    def found() -> ReceivedMetric | None:
        metric = receiver.received.latest(name)
        if metric is None:
            return None
        for point_attributes, value in metric.points():
            if attributes.items() <= point_attributes.items() and value >= at_least:
                return metric
        return None

    return wait_until(
        found,
        what=f"metric {name} {attributes} >= {at_least}",
        state=lambda: sorted({m.name for m in receiver.received.metrics()}),
    )


def test_api_requests_store_calls_and_delivery_and_ingestion_figures_arrive_over_otlp(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    server = ServeProcess(data_dir=tmp_path, admin_token=TOKEN, env=otel_environment(receiver))
    with running(server), admin_client(server.url, TOKEN) as api:
        keys = create_project(api)
        # the caller's trace context (W3C traceparent) is continued by the request's span
        created = api.post(
            "/api/v2/flags/shop",
            json={
                "key": "checkout",
                "name": "checkout",
                "variations": [{"value": 1}, {"value": 2}],
            },
            headers={"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"},
        )
        assert created.status_code == 201, created.text
        assert "checkout" in served_flags(server.url, keys.sdk_key)
        events = [{"kind": "custom", "key": "purchase", "creationDate": 1}]
        posted = httpx.post(
            f"{server.url}/bulk",
            content=json.dumps(events),
            headers={"Authorization": keys.sdk_key, "Content-Type": "application/json"},
            timeout=10,
        )
        assert posted.status_code == 202, posted.text

        request = span_named(
            receiver,
            "POST /api/v2/flags/{projectKey}",
            **{"http.response.status_code": 201, "http.request.method": "POST"},
        )
        assert request.attributes["http.route"] == "/api/v2/flags/{projectKey}"
        assert request.attributes["url.path"] == "/api/v2/flags/shop"
        assert request.span.kind == request.span.SPAN_KIND_SERVER
        assert request.resource["service.name"] == "flagstaff"
        assert request.resource["deployment.environment.name"] == "test"
        assert request.resource["flagstaff.role"] == "all"
        assert request.span.trace_id.hex() == CALLER_TRACE
        assert request.span.parent_span_id.hex() == CALLER_SPAN

        insert = span_named(receiver, "INSERT flags", **{"db.system.name": "sqlite"})
        assert insert.span.trace_id == request.span.trace_id
        assert insert.span.kind == insert.span.SPAN_KIND_CLIENT
        assert insert.attributes["db.operation.name"] == "INSERT"
        assert insert.attributes["db.collection.name"] == "flags"
        assert insert.attributes["db.query.text"].startswith("INSERT INTO flags")
        assert "checkout" not in insert.attributes["db.query.text"]  # parameterised: no values

        metric_where(
            receiver, "flagstaff.delivery.sends", {"flagstaff.delivery.payload": "full"}, 1
        )
        metric_where(
            receiver, "flagstaff.delivery.changes", {"flagstaff.delivery.outcome": "applied"}, 1
        )
        metric_where(
            receiver, "flagstaff.ingest.payloads", {"flagstaff.ingest.outcome": "accepted"}, 1
        )
        duration = metric_where(
            receiver,
            "http.server.request.duration",
            {
                "http.request.method": "POST",
                "http.route": "/api/v2/flags/{projectKey}",
                "http.response.status_code": 201,
            },
            1,
        )
        assert duration.resource["service.name"] == "flagstaff"


OFF_BY_DEFAULT = """
import os, sys
from flagstaff_server.commands.serve import otel_config
import flagstaff_server.app

assert not otel_config(os.environ).enabled
# redis-py (>= 7) imports opentelemetry.sdk.metrics itself whenever it is installed; the tracing
# SDK, the exporters and Flagstaff's export must stay unloaded, the global providers unset
from opentelemetry import metrics, trace
ours = (
    "opentelemetry.sdk.trace",
    "opentelemetry.exporter",
    "flagstaff_server.telemetry.otel_export",
)
print(sorted(m for m in sys.modules if m.startswith(ours)))
print(type(trace.get_tracer_provider()).__name__, type(metrics.get_meter_provider()).__name__)
"""


def test_without_otel_variables_the_server_loads_no_opentelemetry_export() -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    result = subprocess.run(
        [sys.executable, "-c", OFF_BY_DEFAULT],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "ProxyTracerProvider _ProxyMeterProvider"]
