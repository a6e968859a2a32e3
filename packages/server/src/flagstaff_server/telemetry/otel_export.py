"""The OpenTelemetry SDK set up for one server process: a tracer provider exporting spans and a
meter provider exporting metrics, each over OTLP/HTTP, both installed as the global providers
(FastAPI's own instrumentation then traces every management API request and records
`http.server.request.duration`). Imported only when `otel_config` says a signal is exported.

The SDK reads the rest of the standard variables itself: `OTEL_EXPORTER_OTLP_*` (endpoint,
headers, timeout, compression), `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER`, `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opentelemetry import metrics, trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from sqlalchemy import Engine

from flagstaff_server.telemetry import node_metrics
from flagstaff_server.telemetry.otel_config import OtelConfig
from flagstaff_server.telemetry.sql_tracing import trace_engine

if TYPE_CHECKING:
    from flagstaff_server.delivery.node import DeliveryNode
    from flagstaff_server.ingest.node import IngestNode
    from flagstaff_server.services.ports import Store

DEFAULT_SERVICE_NAME = "flagstaff"
INSTRUMENTATION = "flagstaff_server"


def resource(version: str, role: str) -> Resource:
    """The variables' resource (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`), with the
    service named `flagstaff` unless they name it, its version and the server's role."""
    detected = Resource.create({SERVICE_VERSION: version, "flagstaff.role": role})
    if str(detected.attributes.get(SERVICE_NAME, "unknown_service")).startswith("unknown_service"):
        detected = detected.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    return detected


class OtelExport:
    """Satisfies `telemetry_port.Telemetry`."""

    def __init__(self, config: OtelConfig, *, version: str, role: str) -> None:
        self._resource = resource(version, role)
        self._tracer_provider: TracerProvider | None = None
        self._meter_provider: MeterProvider | None = None
        if config.traces:
            self._tracer_provider = TracerProvider(resource=self._resource)
            self._tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            trace.set_tracer_provider(self._tracer_provider)
        if config.metrics:
            reader = PeriodicExportingMetricReader(OTLPMetricExporter())
            self._meter_provider = MeterProvider(resource=self._resource, metric_readers=[reader])
            metrics.set_meter_provider(self._meter_provider)
        self._version = version

    def trace_store(self, store: Store) -> None:
        engine = getattr(store, "engine", None)
        if self._tracer_provider is not None and isinstance(engine, Engine):
            trace_engine(engine, self._tracer_provider.get_tracer(INSTRUMENTATION, self._version))

    def observe_delivery(self, node: DeliveryNode) -> None:
        if self._meter_provider is not None:
            meter = self._meter_provider.get_meter("flagstaff.delivery", self._version)
            node_metrics.observe_delivery(meter, node)

    def observe_ingest(self, node: IngestNode) -> None:
        if self._meter_provider is not None:
            meter = self._meter_provider.get_meter("flagstaff.ingest", self._version)
            node_metrics.observe_ingest(meter, node)

    def shutdown(self) -> None:
        if self._tracer_provider is not None:
            self._tracer_provider.shutdown()
        if self._meter_provider is not None:
            self._meter_provider.shutdown()
