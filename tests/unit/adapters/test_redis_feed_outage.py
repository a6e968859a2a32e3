"""The Redis feed with Redis unreachable: publishing never fails the caller, and subscribers are
served from the store's outbox instead."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from datetime import UTC, datetime

from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.redis_feed import RedisChangeFeed

NOWHERE = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def commit(store: InMemoryStore, key: str) -> int:
    with store.unit_of_work() as uow:
        return uow.changes.append(
            project="p",
            environment="e",
            kind="flag",
            key=key,
            version=1,
            item={"key": key},
            at=datetime(2026, 1, 1, tzinfo=UTC),
        )


async def test_publish_survives_an_unreachable_redis_and_subscribers_use_the_outbox() -> None:
    store = InMemoryStore()
    feed = RedisChangeFeed(store, NOWHERE, retry_delay=0.01)
    feed.publish(commit(store, "a"))
    assert feed.publish_failures == 1
    async with aclosing(feed.subscribe(0)) as changes:
        async with asyncio.timeout(10):
            first = await anext(changes)
            commit(store, "b")
            second = await anext(changes)
    assert [(first.seq, first.key), (second.seq, second.key)] == [(1, "a"), (2, "b")]
    assert await feed.latest_seq() == 2
    await feed.aclose()
