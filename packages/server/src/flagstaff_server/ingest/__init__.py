"""Event ingestion: the LaunchDarkly event endpoints, a durable local journal acknowledged after
fsync, and processing into the analytics store. See docs/ingestion.md."""

from flagstaff_server.ingest.asgi import IngestApp, handles
from flagstaff_server.ingest.config import IngestConfig
from flagstaff_server.ingest.node import IngestNode

__all__ = ["IngestApp", "IngestConfig", "IngestNode", "handles"]
