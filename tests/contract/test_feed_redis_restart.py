"""The Redis feed across a Redis restart that loses the stream, on a private redis-server (never the
shared one): every change still arrives once, in order, while Redis is down and after it is back."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import aclosing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.redis_feed import RedisChangeFeed
from support.deadlines import take
from support.private_redis import PrivateRedis
from support.private_redis import private_redis as private_redis_server

DEADLINE = 15.0


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    with private_redis_server(tmp_path) as server:
        yield server


def commit(store: InMemoryStore, feed: RedisChangeFeed, key: str) -> None:
    with store.unit_of_work() as uow:
        seq = uow.changes.append(
            project="p",
            environment="e",
            kind="flag",
            key=key,
            version=1,
            item={"key": key},
            at=datetime(2026, 1, 1, tzinfo=UTC),
        )
    feed.publish(seq)


@pytest.mark.service
async def test_every_change_arrives_once_in_order_across_a_redis_restart(
    private_redis: PrivateRedis,
) -> None:
    store = InMemoryStore()
    feed = RedisChangeFeed(store, private_redis.url, idle_check=0.2, retry_delay=0.05)
    async with aclosing(feed.subscribe(0)) as changes:
        for key in ("a", "b", "c"):
            commit(store, feed, key)
        before = await take(changes, 3, within=DEADLINE)

        await asyncio.to_thread(private_redis.stop)
        for key in ("d", "e"):
            commit(store, feed, key)  # publish fails quietly; the outbox has them
        during = await take(changes, 2, within=DEADLINE)

        await asyncio.to_thread(private_redis.start)  # empty: the stream is gone
        for key in ("f", "g"):
            commit(store, feed, key)
        after = await take(changes, 2, within=DEADLINE)
    received = before + during + after
    assert [(c.seq, c.key) for c in received] == list(enumerate("abcdefg", start=1))
    assert feed.publish_failures >= 2
    await feed.aclose()
