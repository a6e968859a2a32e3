"""Event ingestion: the LaunchDarkly event endpoints, a durable local journal acknowledged after
fsync, and processing into the analytics store. See docs/ingestion.md.

The names below are imported on first use: the processor process (`processor_child`) imports
this package and needs none of the HTTP side (FastAPI, Redis), which took half its start."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flagstaff_server.ingest.asgi import IngestApp, handles
    from flagstaff_server.ingest.config import IngestConfig
    from flagstaff_server.ingest.node import IngestNode

__all__ = ["IngestApp", "IngestConfig", "IngestNode", "handles"]

_HOMES = {
    "IngestApp": "asgi",
    "handles": "asgi",
    "IngestConfig": "config",
    "IngestNode": "node",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
