"""Scale-out through the composition root: an `api` node and a `delivery` node sharing PostgreSQL
and a Redis Streams change feed. What the API commits (projects, flags, key resets) reaches SDKs
served by the other node, which never shares memory with it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.adapters.redis_feed import RedisChangeFeed
from flagstaff_server.adapters.sql.store import SqlStore
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from platform_api import ADMIN, ADMIN_TOKEN, create_project
from support.deadlines import eventually
from support.in_process import asgi_client
from support.services import REDIS_URL, postgres_database, redis_stream_key

PROPAGATION = 20.0
"""Seconds a change may take from the API node to the delivery node (a liveness bound)."""

pytestmark = pytest.mark.service


@pytest.fixture
def database_url() -> Iterator[str]:
    """A throwaway PostgreSQL database, dropped afterwards."""
    with postgres_database("flagstaff_scale") as url:
        yield url


@pytest.fixture
def stream() -> Iterator[str]:
    """A Redis stream key no other test uses, deleted afterwards."""
    with redis_stream_key() as key:
        yield key


def node(role: str, data_dir: Path, database_url: str, stream: str) -> Flagstaff:
    store = SqlStore(database_url)
    settings = Settings(
        data_dir=data_dir,
        role=role,  # type: ignore[arg-type]
        admin_token=ADMIN_TOKEN,
        seed_demo=False,
        database_url=database_url,
        redis_url=REDIS_URL,
    )
    feed = RedisChangeFeed(store, REDIS_URL, stream=stream)
    return Flagstaff(settings, store=store, feed=feed, announce=lambda line: None)


@pytest.fixture
async def nodes(
    tmp_path: Path, database_url: str, stream: str
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    api = node("api", tmp_path / "api", database_url, stream)
    delivery = node("delivery", tmp_path / "delivery", database_url, stream)
    async with (
        api.running(),
        delivery.running(),
        asgi_client(api.asgi, base_url="http://api") as api_client,
        asgi_client(delivery.asgi, base_url="http://delivery") as delivery_client,
    ):
        yield api_client, delivery_client


async def test_api_changes_reach_sdks_on_the_delivery_node(
    nodes: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    api, delivery = nodes
    assert (await api.get("/sdk/latest-all")).status_code == 404  # not this node's job
    assert (await delivery.get("/api/v2/projects", headers=ADMIN)).status_code == 404

    project = await create_project(api, "shop")
    sdk_key = next(env["apiKey"] for env in project["environments"] if env["key"] == "production")

    async def flags_for(key: str) -> dict[str, Any] | None:
        response = await delivery.get("/sdk/latest-all", headers={"Authorization": key})
        return response.json()["flags"] if response.status_code == 200 else None

    async def opens(key: str) -> bool:
        return await flags_for(key) is not None

    await eventually(
        lambda: opens(sdk_key),
        what="the new environment's SDK key opens delivery",
        within=PROPAGATION,
        interval=0.05,
    )

    made = await api.post(
        "/api/v2/flags/shop", json={"key": "checkout", "name": "Checkout"}, headers=ADMIN
    )
    assert made.status_code == 201, made.text

    async def has_checkout() -> bool:
        flags = await flags_for(sdk_key)
        return flags is not None and "checkout" in flags

    await eventually(
        has_checkout,
        what="the new flag is served",
        within=PROPAGATION,
        interval=0.05,
    )

    reset = await api.post("/api/v2/projects/shop/environments/production/apiKey", headers=ADMIN)
    new_key = reset.json()["apiKey"]
    await eventually(
        lambda: opens(new_key),
        what="the reset key opens delivery",
        within=PROPAGATION,
        interval=0.05,
    )
    assert await opens(sdk_key)  # the old key, inside its grace period

    status = (await delivery.get("/status")).json()
    assert status["parts"]["changeFeed"]["kind"] == "redis"
    assert status["parts"]["store"]["backend"] == "postgresql"
    assert "api" not in status["parts"]
