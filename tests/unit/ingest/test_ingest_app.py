"""The event endpoints in process, through both ways in: the ASGI app, and a real uvicorn server
on loopback whose connection protocol serves most POSTs itself (`ingest/connection.py`):
credentials of three kinds, CORS preflight, 202 + Date, payload-id de-duplication (also while the
first append is in flight), 400/401/413 that leave accepted payloads untouched, and processing
into the analytics store."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
from delivery_support import ENVIRONMENT, PROJECT, SDK_KEY
from endpoint_support import CLIENT_ID, MOBILE_KEY, headers, served, summary
from flagstaff_server.ingest import IngestNode
from support.deadlines import eventually
from support.in_process import asgi_client


@pytest.fixture(params=["asgi", "connection"])
async def client(
    request: pytest.FixtureRequest, node: IngestNode
) -> AsyncIterator[httpx.AsyncClient]:
    if request.param == "asgi":
        async with asgi_client(node.app, base_url="http://n") as found:
            yield found
        return
    async with served(node.app) as base_url, httpx.AsyncClient(base_url=base_url) as found:
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
    await eventually(lambda: counted(node) == {"0": 4})


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
    await eventually(lambda: counted(node) == {"0": 4})


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
    shape = refusals[1][0].json()
    assert shape["path"] == ""
    assert "Expected `array`, got `object`" in shape["detail"]
    assert node.journal.durable_seq == 1
    await eventually(lambda: counted(node) == {"0": 5})


async def test_gzip_bodies_are_accepted(node: IngestNode, client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/bulk",
        content=gzip.compress(summary(3, variation=1)),
        headers={**headers("gz"), "Content-Encoding": "gzip"},
    )
    assert response.status_code == 202
    await eventually(lambda: counted(node) == {"1": 3})


async def test_mobile_and_client_credentials_are_known_on_first_use(node: IngestNode) -> None:
    # known at once from the delivery store's indexes (the first request of each such key once
    # waited for the node's probe)
    assert node.keyring.known("mobile", MOBILE_KEY) == (PROJECT, ENVIRONMENT)
    assert node.keyring.known("client", CLIENT_ID) == (PROJECT, ENVIRONMENT)
    assert node.keyring.known("mobile", "mob-unknown") is None


async def test_payloads_nested_too_deep_are_400_on_every_endpoint_and_leave_nothing(
    node: IngestNode, client: httpx.AsyncClient
) -> None:
    """Nested 1,000 deep a payload was a 500 (the shape check's recursion) on every endpoint."""
    deep = b"[" * 1_000 + b"]" * 1_000
    analytics = b'[{"kind":"custom","key":"m","data":%s}]' % deep
    diagnostic = b'{"kind":"diagnostic","platform":%s}' % deep
    mobile = headers(key=f"api_key {MOBILE_KEY}")
    browser = {"Content-Type": "application/json"}
    posts = [
        ("/bulk", analytics, headers()),
        ("/diagnostic", diagnostic, headers()),
        ("/mobile", analytics, mobile),
        ("/mobile/events/bulk", analytics, mobile),
        ("/mobile/events/diagnostic", diagnostic, mobile),
        (f"/events/bulk/{CLIENT_ID}", analytics, browser),
        (f"/events/diagnostic/{CLIENT_ID}", diagnostic, browser),
    ]
    for path, body, sent in posts:
        response = await client.post(path, content=body, headers=sent)
        assert response.status_code == 400, (path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["path"].startswith(("/0/data/0/0", "/platform/0/0"))
    assert node.journal.durable_seq == 0


async def test_every_event_endpoint_refuses_a_body_over_its_limit_declared_or_chunked(
    node: IngestNode, client: httpx.AsyncClient
) -> None:
    """The management API's body limit has its twin here (`max_body_bytes`, 100 kB in these
    tests), for the browser and mobile paths and for bodies without a length as well."""
    big = b"[" + b" " * 200_000 + b"]"

    async def streamed() -> AsyncIterator[bytes]:
        for start in range(0, len(big), 16_384):
            yield big[start : start + 16_384]

    mobile = headers(key=f"api_key {MOBILE_KEY}")
    for path, sent in (
        ("/bulk", headers()),
        ("/diagnostic", headers()),
        ("/mobile/events/bulk", mobile),
        (f"/events/bulk/{CLIENT_ID}", {"Content-Type": "application/json"}),
    ):
        for content in (big, streamed()):
            response = await client.post(path, content=content, headers=sent)
            assert response.status_code == 413, (path, response.text)
            assert response.json()["code"] == "payload_too_large"
    assert node.journal.durable_seq == 0
