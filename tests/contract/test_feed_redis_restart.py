"""The Redis feed across a Redis restart that loses the stream, on a private redis-server (never the
shared one): every change still arrives once, in order, while Redis is down and after it is back."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.redis_feed import RedisChangeFeed
from flagstaff_server.services.ports import Change
from support.deadlines import wait_until
from support.ports import free_port
from support.prerequisites import missing_prerequisite

DEADLINE = 15.0


class PrivateRedis:
    """A redis-server of this test's own, without persistence, that can be stopped and started."""

    def __init__(self, binary: str, directory: Path) -> None:
        self._binary = binary
        self._directory = directory
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._process = subprocess.Popen(
            [
                self._binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self._directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(
            self.answers, timeout=DEADLINE, interval=0.02, what=f"redis-server on {self.port}"
        )

    def answers(self) -> bool:
        try:
            with redis.Redis.from_url(self.url, socket_connect_timeout=1) as client:
                client.ping()
        except redis.ConnectionError:
            return False
        return True

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=DEADLINE)
            self._process = None


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    binary = shutil.which("redis-server")
    if binary is None:
        missing_prerequisite("redis-server is not installed")
        raise AssertionError("unreachable")
    server = PrivateRedis(binary, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


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


async def take(changes: AsyncIterator[Change], count: int) -> list[Change]:
    got: list[Change] = []
    async with asyncio.timeout(DEADLINE):
        while len(got) < count:
            got.append(await anext(changes))
    return got


@pytest.mark.service
async def test_every_change_arrives_once_in_order_across_a_redis_restart(
    private_redis: PrivateRedis,
) -> None:
    store = InMemoryStore()
    feed = RedisChangeFeed(store, private_redis.url, idle_check=0.2, retry_delay=0.05)
    async with aclosing(feed.subscribe(0)) as changes:
        for key in ("a", "b", "c"):
            commit(store, feed, key)
        before = await take(changes, 3)

        await asyncio.to_thread(private_redis.stop)
        for key in ("d", "e"):
            commit(store, feed, key)  # publish fails quietly; the outbox has them
        during = await take(changes, 2)

        await asyncio.to_thread(private_redis.start)  # empty: the stream is gone
        for key in ("f", "g"):
            commit(store, feed, key)
        after = await take(changes, 2)
    received = before + during + after
    assert [(c.seq, c.key) for c in received] == list(enumerate("abcdefg", start=1))
    assert feed.publish_failures >= 2
    await feed.aclose()
