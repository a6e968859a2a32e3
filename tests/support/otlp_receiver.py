"""An OTLP/HTTP receiver for tests: the collector's `/v1/traces` and `/v1/metrics` endpoints on a
loopback port, decoding each export request with `opentelemetry-proto` (the protocol's own
generated messages) and keeping what arrived. Exporters are real (the OpenTelemetry SDK's OTLP
exporter, in this process or another); nothing here fakes a span.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.threaded_servers import serve_http


def value_of(value: AnyValue) -> Any:
    """An attribute value as Python: str, bool, int, float, bytes, list or dict."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return None if kind is None else getattr(value, kind)


def attributes_of(pairs: Iterator[KeyValue] | Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs}


@dataclass(frozen=True, slots=True)
class ReceivedSpan:
    """One span as it arrived, with its resource's and its own attributes decoded."""

    resource: dict[str, Any]
    scope: str
    span: Span
    attributes: dict[str, Any]

    @property
    def name(self) -> str:
        return self.span.name

    def events(self, name: str) -> list[dict[str, Any]]:
        """The attributes of each of this span's events called `name`."""
        return [attributes_of(e.attributes) for e in self.span.events if e.name == name]


@dataclass(frozen=True, slots=True)
class ReceivedMetric:
    resource: dict[str, Any]
    scope: str
    metric: Metric

    @property
    def name(self) -> str:
        return self.metric.name

    def points(self) -> list[tuple[dict[str, Any], float]]:
        """Each data point's attributes and value (a sum's or gauge's value; a histogram's
        count)."""
        kind = self.metric.WhichOneof("data")
        if kind == "histogram":
            return [
                (attributes_of(p.attributes), p.count) for p in self.metric.histogram.data_points
            ]
        if kind not in ("sum", "gauge"):
            return []
        return [
            (attributes_of(p.attributes), p.as_int if p.HasField("as_int") else p.as_double)
            for p in getattr(self.metric, kind).data_points
        ]


@dataclass
class Received:
    """What the receiver has decoded so far; safe to read while exports arrive."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    traces: list[ExportTraceServiceRequest] = field(default_factory=list)
    metric_exports: list[ExportMetricsServiceRequest] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def add(self, path: str, body: bytes) -> bytes | None:
        """Decode one export; the encoded response, or None for a path that is not OTLP's."""
        if path == "/v1/traces":
            request: Any = ExportTraceServiceRequest.FromString(body)
            response: Any = ExportTraceServiceResponse()
            with self._lock:
                self.traces.append(request)
                self.paths.append(path)
        elif path == "/v1/metrics":
            request = ExportMetricsServiceRequest.FromString(body)
            response = ExportMetricsServiceResponse()
            with self._lock:
                self.metric_exports.append(request)
                self.paths.append(path)
        else:
            return None
        encoded: bytes = response.SerializeToString()
        return encoded

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            exports = list(self.traces)
        return [
            ReceivedSpan(
                resource=attributes_of(rs.resource.attributes),
                scope=ss.scope.name,
                span=span,
                attributes=attributes_of(span.attributes),
            )
            for export in exports
            for rs in export.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]

    def metrics(self) -> list[ReceivedMetric]:
        with self._lock:
            exports = list(self.metric_exports)
        return [
            ReceivedMetric(
                resource=attributes_of(rm.resource.attributes), scope=sm.scope.name, metric=m
            )
            for export in exports
            for rm in export.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
        ]

    def latest(self, name: str) -> ReceivedMetric | None:
        """The last export of metric `name`."""
        found = [m for m in self.metrics() if m.name == name]
        return found[-1] if found else None


class _OtlpHandler(BaseHTTPRequestHandler):
    def __init__(self, received: Received, *args: Any) -> None:
        self.received = received
        super().__init__(*args)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_error(415, "OTLP/HTTP binary protobuf only")
            return
        response = self.received.add(self.path, body)
        if response is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(response)))
        self.end_headers()
        self.wfile.write(response)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@dataclass(frozen=True, slots=True)
class OtlpReceiver:
    endpoint: str
    """`OTEL_EXPORTER_OTLP_ENDPOINT`: the exporters add `/v1/traces` and `/v1/metrics`."""
    received: Received


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/HTTP receiver on a free loopback port for the duration of the block."""
    received = Received()
    with serve_http(partial(_OtlpHandler, received)) as server:
        yield OtlpReceiver(endpoint=f"http://127.0.0.1:{server.port}", received=received)
