"""What the composition root hands its parts to for OpenTelemetry: a `Telemetry` (the OTLP export
in `otel_export` satisfies it). A declaration only, so the app can take one without importing
OpenTelemetry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from flagstaff_server.delivery.node import DeliveryNode
    from flagstaff_server.ingest.node import IngestNode
    from flagstaff_server.services.ports import Store


class Telemetry(Protocol):
    def trace_store(self, store: Store) -> None:
        """Spans for the store's calls from now on (a SQL store's statements)."""
        ...

    def observe_delivery(self, node: DeliveryNode) -> None: ...

    def observe_ingest(self, node: IngestNode) -> None: ...

    def shutdown(self) -> None:
        """Export what is pending and stop exporting."""
        ...
