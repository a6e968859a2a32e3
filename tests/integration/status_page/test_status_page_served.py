"""The whole server in-process (SQLite): a notice posted through the management API reaches the
status page through the outbox and the delivery node's feed, and leaves it when deleted; the
page and the feed are served with their headers, HEAD too, and anything else is a 405."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from support.deadlines import eventually
from support.in_process import asgi_client

TOKEN = "status-page-admin-token"
ADMIN = {"Authorization": TOKEN}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        data_dir=tmp_path, admin_token=TOKEN, seed_demo=False, status_poll_seconds=0.1
    )
    flagstaff = Flagstaff(settings, announce=lambda line: None)
    async with flagstaff.running(), asgi_client(flagstaff.asgi) as http:
        yield http


async def feed(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/status/feed.json")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_notice_posted_through_the_api_shows_on_the_page_until_deleted(
    client: httpx.AsyncClient,
) -> None:
    posted = await client.post(
        "/api/v2/status/notices",
        json={
            "title": "EU edits are read-only",
            "message": "Use the kill switch for emergencies.",
            "severity": "warning",
            "regions": ["eu"],
        },
        headers=ADMIN,
    )
    assert posted.status_code == 201, posted.text
    notice_id = posted.json()["_id"]

    async def shown() -> bool:
        return [n["_id"] for n in (await feed(client))["notices"]] == [notice_id]

    await eventually(shown, what="the notice on the status feed")
    page = (await client.get("/status/page")).text
    assert "EU edits are read-only" in page
    assert "Use the kill switch for emergencies." in page
    assert "Regions: eu" in page

    assert (await client.delete(f"/api/v2/status/notices/{notice_id}", headers=ADMIN)).is_success

    async def gone() -> bool:
        return (await feed(client))["notices"] == []

    await eventually(gone, what="the deleted notice to leave the feed")
    assert "EU edits are read-only" not in (await client.get("/status/page")).text


async def test_the_page_shows_this_nodes_components_and_data_age(
    client: httpx.AsyncClient,
) -> None:
    async def settled() -> bool:
        # ingestion says its analytics store is down until its first pass reached it
        document = await feed(client)
        delivery = document["delivery"]
        known = delivery is not None and delivery["dataAgeSeconds"] is not None
        return known and document["state"] == "operational"

    await eventually(settled, what="this node's data age and every part operational")
    document = await feed(client)
    (region,) = document["regions"]
    assert region["name"] == "local"
    assert [c["component"] for c in region["components"]] == [
        "api",
        "database",
        "changeFeed",
        "delivery",
        "ingest",
    ]
    status = (await client.get("/status")).json()
    assert status["parts"]["delivery"]["dataAgeSeconds"] < 30
    assert status["parts"]["ingest"]["fleet"]["running"] == 0


async def test_the_page_and_feed_headers_and_methods(client: httpx.AsyncClient) -> None:
    page = await client.get("/status/page")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert page.headers["x-content-type-options"] == "nosniff"
    head = await client.head("/status/page")
    assert (head.status_code, head.content) == (200, b"")
    assert int(head.headers["content-length"]) > 1000
    document = await client.get("/status/feed.json")
    assert document.headers["content-type"] == "application/json"
    assert document.headers["access-control-allow-origin"] == "*"
    refused = await client.post("/status/page", content=b"x")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "GET, HEAD"
    assert refused.json()["code"] == "method_not_allowed"
