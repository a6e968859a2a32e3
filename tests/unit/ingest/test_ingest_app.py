"""The event endpoints in process (ASGI): credentials of three kinds, CORS preflight, 202 + Date,
payload-id de-duplication (also while the first append is in flight), 400/401/413 that leave
accepted payloads untouched, and processing into the analytics store."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import orjson
import pytest
from delivery_support import ENVIRONMENT, PROJECT, SDK_KEY, change, environment
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.ingest import IngestConfig, IngestNode
from flagstaff_server.ingest.analytics import AnalyticsStore
from flagstaff_server.services.ports import Change

CLIENT_ID = "0" * 24
MOBILE_KEY = "mob-x"


class Feed:
    """One environment change, then silence."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        for item in self.changes:
            if item.seq > after_seq:
                yield item
        await asyncio.Event().wait()

    async def latest_seq(self) -> int:
        return self.changes[-1].seq

    async def aclose(self) -> None:
        return None


async def until(predicate: Callable[[], bool]) -> None:
    for _ in range(1000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached in 5 s")


def summary(count: int, variation: int = 0) -> bytes:
    counter = {"value": True, "variation": variation, "version": 1, "count": count}
    features = {"f": {"default": False, "counters": [counter]}}
    return orjson.dumps(
        [{"kind": "summary", "startDate": 1_000, "endDate": 7_200_000, "features": features}]
    )


def headers(payload_id: str | None = None, key: str = SDK_KEY) -> dict[str, str]:
    found = {"Authorization": key, "Content-Type": "application/json"}
    if payload_id is not None:
        found["X-LaunchDarkly-Payload-ID"] = payload_id
    return found


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[IngestNode]:
    delivery = DeliveryNode(
        Feed([change(1, "environment", ENVIRONMENT, environment())]),
        DeliveryConfig(probe_interval_seconds=0.0, probe_timeout_seconds=0.5),
    )
    await delivery.start()
    await until(lambda: delivery.current)
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


@pytest.fixture
async def client(node: IngestNode) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=node.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://n") as found:
        yield found


def counted(node: IngestNode) -> dict[str, int]:
    assert node.analytics is not None
    series = node.analytics.evaluation_series(PROJECT, ENVIRONMENT, "f", start_ms=0, end_ms=10**13)
    return {str(variation): count for _, variation, count in series}


async def test_accepted_with_date_and_repeated_ids_counted_once(
    node: IngestNode, client: httpx.AsyncClient
) -> None:
    for _ in range(3):
        response = await client.post("/bulk", content=summary(4), headers=headers("p-1"))
        assert response.status_code == 202
        assert "date" in response.headers
    assert node.journal.durable_seq == 1
    await until(lambda: counted(node) == {"0": 4})


async def test_a_repeat_while_the_first_append_is_in_flight_waits_for_it(
    node: IngestNode, client: httpx.AsyncClient
) -> None:
    responses = await asyncio.gather(
        *(client.post("/bulk", content=summary(2), headers=headers("same")) for _ in range(5))
    )
    assert [r.status_code for r in responses] == [202] * 5
    assert node.journal.durable_seq == 1


async def test_mobile_and_browser_credentials_and_diagnostics(
    node: IngestNode, client: httpx.AsyncClient
) -> None:
    mobile = headers("m-1", key=f"api_key {MOBILE_KEY}")
    for path in ("/mobile", "/mobile/events", "/mobile/events/bulk"):
        assert (await client.post(path, content=summary(1), headers=mobile)).status_code == 202
        mobile["X-LaunchDarkly-Payload-ID"] += "x"
    browser = {"Content-Type": "application/json", "Origin": "https://app.example"}
    response = await client.post(f"/events/bulk/{CLIENT_ID}", content=summary(1), headers=browser)
    assert response.status_code == 202
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    assert "Date" in response.headers["access-control-expose-headers"]
    diagnostic = orjson.dumps({"kind": "diagnostic-init", "id": {"diagnosticId": "d1"}})
    for path, key in (("/diagnostic", SDK_KEY), ("/mobile/events/diagnostic", MOBILE_KEY)):
        response = await client.post(path, content=diagnostic, headers=headers(key=key))
        assert response.status_code == 202
    response = await client.post(f"/events/diagnostic/{CLIENT_ID}", content=diagnostic)
    assert response.status_code == 202
    await until(lambda: counted(node) == {"0": 4})


async def test_cors_preflight_allows_the_sdk_headers(client: httpx.AsyncClient) -> None:
    response = await client.options(
        f"/events/bulk/{CLIENT_ID}",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
    )
    assert response.status_code == 200
    allowed = response.headers["access-control-allow-headers"].lower().split(",")
    for name in (
        "x-launchdarkly-user-agent",
        "x-launchdarkly-payload-id",
        "x-launchdarkly-event-schema",
        "x-launchdarkly-wrapper",
        "x-launchdarkly-tags",
        "content-type",
    ):
        assert name in allowed
    assert response.headers["access-control-expose-headers"] == "Date, ETag"


async def test_refusals_leave_accepted_payloads_alone(
    node: IngestNode, client: httpx.AsyncClient
) -> None:
    assert (
        await client.post("/bulk", content=summary(5), headers=headers("ok"))
    ).status_code == 202
    refusals = [
        (await client.post("/bulk", content=b"[{", headers=headers("bad-json")), 400),
        (await client.post("/bulk", content=b'{"kind":"x"}', headers=headers("obj")), 400),
        (await client.post("/bulk", content=summary(1), headers=headers(key="sdk-nope")), 401),
        (await client.post("/bulk", content=b"[" + b" " * 200_000 + b"]", headers=headers()), 413),
        (
            await client.post(
                "/bulk",
                content=gzip.compress(b"[" + b" " * 50_000_000 + b"]"),
                headers={**headers("bomb"), "Content-Encoding": "gzip"},
            ),
            413,
        ),
        (
            await client.post(
                "/bulk",
                content=summary(1),
                headers={**headers("v3"), "X-LaunchDarkly-Event-Schema": "3"},
            ),
            400,
        ),
        (await client.get("/bulk", headers=headers()), 405),
    ]
    for response, status in refusals:
        assert response.status_code == status, response.text
        if status != 405:
            assert response.headers["content-type"] == "application/problem+json"
    assert node.journal.durable_seq == 1
    await until(lambda: counted(node) == {"0": 5})


async def test_gzip_bodies_are_accepted(node: IngestNode, client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/bulk",
        content=gzip.compress(summary(3, variation=1)),
        headers={**headers("gz"), "Content-Encoding": "gzip"},
    )
    assert response.status_code == 202
    await until(lambda: counted(node) == {"1": 3})
