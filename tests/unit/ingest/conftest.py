"""The ingest node the event endpoint tests share: one environment (SDK, mobile and client-side
credentials), a journal in the test's directory and a SQLite analytics store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from delivery_support import ENVIRONMENT, FixedFeed, change, environment
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.ingest import IngestConfig, IngestNode
from flagstaff_server.ingest.analytics import AnalyticsStore
from support.deadlines import eventually


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[IngestNode]:
    delivery = DeliveryNode(
        FixedFeed([change(1, "environment", ENVIRONMENT, environment())]),
        DeliveryConfig(probe_interval_seconds=0.0, probe_timeout_seconds=0.5),
    )
    await delivery.start()
    await eventually(lambda: delivery.current)
    ingest = IngestNode(
        IngestConfig(data_dir=tmp_path / "ingest", max_body_bytes=100_000),
        delivery=delivery,
        analytics=AnalyticsStore(f"sqlite:///{tmp_path / 'analytics.db'}"),
    )
    await ingest.start()
    try:
        yield ingest
    finally:
        await ingest.stop()
        await delivery.stop()
