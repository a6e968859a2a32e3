"""The Redis feed with Redis unreachable: publishing never fails the caller, subscribers are
served from the store's outbox instead, and the health check (`ping`) and `latest_seq` say what
is down in our own error, never a driver's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from datetime import UTC, datetime

import pytest
from flagstaff_server.adapters.memory import InMemoryStore, InMemoryUnitOfWork
from flagstaff_server.adapters.redis_feed import RedisChangeFeed
from flagstaff_server.errors import StoreUnavailable

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


class DownStore(InMemoryStore):
    """An in-memory store that fails like an unreachable database."""

    @contextmanager
    def unit_of_work(self, *, read_only: bool = False) -> Iterator[InMemoryUnitOfWork]:
        raise StoreUnavailable("database unreachable (test)")
        yield  # pragma: no cover - makes this a generator


async def test_ping_names_redis_while_the_outbox_still_gives_the_head() -> None:
    store = InMemoryStore()
    commit(store, "a")
    feed = RedisChangeFeed(store, NOWHERE)
    with pytest.raises(StoreUnavailable, match="Redis does not answer"):
        await feed.ping()
    assert await feed.latest_seq() == 1
    await feed.aclose()


async def test_latest_seq_with_neither_the_outbox_nor_redis_is_our_error() -> None:
    feed = RedisChangeFeed(DownStore(), NOWHERE)
    with pytest.raises(StoreUnavailable, match="neither the outbox nor Redis"):
        await feed.latest_seq()
    await feed.aclose()
