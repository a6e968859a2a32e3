"""`/status` of every role on PostgreSQL and the Redis change feed while Redis is down: degraded,
naming the change feed (changes still flow from the outbox), and healthy again once Redis is
back. Redis is a private redis-server of this test's own, stopped mid-test; PostgreSQL stays up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Role, Settings
from support.deadlines import eventually
from support.in_process import asgi_client
from support.private_redis import private_redis
from support.services import postgres_database

pytestmark = pytest.mark.service

ADMIN = "status-feed-admin-token-0123456789"
DEADLINE_SECONDS = 15.0


async def _status(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/status")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _healthy(client: httpx.AsyncClient, what: str) -> dict[str, Any]:
    """Poll `/status` (with a deadline) until it says healthy; returns that document."""
    found: list[dict[str, Any]] = []

    async def healthy() -> bool:
        found[:] = [await _status(client)]
        return bool(found[0]["status"] == "healthy")

    await eventually(healthy, within=DEADLINE_SECONDS, interval=0.05, what=what, state=found.copy)
    return found[0]


@pytest.mark.parametrize("role", ["api", "delivery", "ingest", "worker", "all"])
async def test_status_is_degraded_naming_the_change_feed_while_redis_is_down(
    role: Role, tmp_path: Path
) -> None:
    with postgres_database() as database, private_redis(tmp_path) as redis_server:
        settings = Settings(
            data_dir=tmp_path / "data",
            role=role,
            database_url=database,
            redis_url=redis_server.url,
            admin_token=ADMIN,
            seed_demo=False,
        )
        server = Flagstaff(settings, announce=lambda line: None)
        client = asgi_client(server.asgi, base_url="http://t")
        async with client, server.running():
            healthy = await _healthy(client, "a healthy start")
            assert healthy["parts"]["changeFeed"]["status"] == "ok"
            assert healthy["parts"]["changeFeed"]["kind"] == "redis"

            redis_server.stop()
            body = await _status(client)
            assert body["status"] == "degraded"
            feed = body["parts"]["changeFeed"]
            assert feed["status"] == "degraded"
            assert feed["kind"] == "redis"
            assert "Redis" in feed["error"]
            # the outbox still answers, so the feed still knows its head
            assert feed["latestSeq"] == healthy["parts"]["changeFeed"]["latestSeq"]
            assert body["parts"]["store"]["status"] == "ok"

            redis_server.start()
            await _healthy(client, "healthy again with Redis back")
