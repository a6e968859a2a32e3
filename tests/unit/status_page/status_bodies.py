"""`/status` bodies as the nodes answer them, for the status page's unit tests: an all-in-one
or API node, a delivery node, an ingestion node with its fleet summary, a relay."""

from __future__ import annotations

from typing import Any


def api_body(
    *,
    region: str = "a",
    store: str = "ok",
    role: str = "primary",
    lag: float | None = None,
    ready: bool = True,
    primary: str | None = None,
) -> dict[str, Any]:
    return {
        "status": "healthy" if store == "ok" else "degraded",
        "ready": ready,
        "version": "1.0",
        "role": "api",
        "region": {
            "name": region,
            "primaryRegion": primary,
            "readOnly": role == "standby",
            "database": {"role": role, "replicationLagSeconds": lag, "timeline": 1, "epoch": 1},
        },
        "parts": {
            "store": {"status": store, "backend": "postgresql"},
            "changeFeed": {"status": "ok", "kind": "in-process", "latestSeq": 7},
            "api": {"status": "ok"},
        },
    }


def delivery_body(*, region: str = "a", age: float | None = 0.4) -> dict[str, Any]:
    return {
        "status": "healthy",
        "ready": True,
        "version": "1.0",
        "role": "delivery",
        "region": {"name": region},
        "parts": {
            "store": {"status": "ok", "backend": "postgresql"},
            "changeFeed": {"status": "ok", "kind": "in-process", "latestSeq": 7},
            "delivery": {
                "status": "ok",
                "feedConnected": True,
                "current": True,
                "position": 7,
                "dataAgeSeconds": age,
                "environments": 2,
            },
        },
    }


def ingest_body(
    *, region: str = "a", analytics: str = "ok", backlog: int = 3, fleet: Any = None
) -> dict[str, Any]:
    return {
        "status": "healthy",
        "ready": True,
        "version": "1.0",
        "role": "ingest",
        "region": {"name": region},
        "parts": {
            "store": {"status": "ok", "backend": "postgresql"},
            "ingest": {
                "status": "ok" if analytics == "ok" else "degraded",
                "backlog": backlog,
                "analyticsStore": analytics,
                "fleet": fleet,
            },
        },
    }


def relay_body(*, connected: bool = True, age: float = 0.0, spooled: int = 0) -> dict[str, Any]:
    return {
        "status": "healthy" if connected else "degraded",
        "ready": True,
        "role": "relay",
        "version": "1.0",
        "region": {"name": "edge"},
        "environments": {
            "production": {
                "serving": True,
                "status": "connected" if connected else "disconnected",
                "dataAgeSeconds": age,
            },
            "staging": {"serving": True, "status": "connected", "dataAgeSeconds": 0.0},
        },
        "events": {"spooled": spooled, "upstreamConnected": connected},
    }
