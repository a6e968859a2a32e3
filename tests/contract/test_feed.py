"""The change-feed contract: every ChangeFeed (in-process, Redis Streams) delivers each committed
change once, in seq order, from any starting seq, whatever the store behind it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.adapters.redis_feed import RedisChangeFeed, encode_entry
from flagstaff_server.services.epochs import SEQ_GAP, start_epoch
from flagstaff_server.services.ports import Change, ChangeFeed, JsonObject, Store
from support.deadlines import take
from support.services import REDIS_URL
from support.stores import open_store

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DEADLINE = 10.0


@dataclass
class Rig:
    store: Store
    feed: ChangeFeed

    def commit(
        self, key: str = "f", *, item: JsonObject | None = None, announce: bool = True
    ) -> int:
        with self.store.unit_of_work() as uow:
            seq = uow.changes.append(
                project="p",
                environment="e",
                kind="flag",
                key=key,
                version=1,
                item={"key": key} if item is None else item,
                at=T0,
            )
        if announce:
            self.feed.publish(seq)
        return seq

    def commit_many(self, count: int) -> list[int]:
        return [self.commit(f"k{i}") for i in range(count)]


FEEDS = [
    "in-process/memory",
    "in-process/sqlite",
    pytest.param("redis/memory", marks=pytest.mark.service),
    pytest.param("redis/postgresql", marks=pytest.mark.service),
]


@pytest.fixture(params=FEEDS)
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    feed_kind, store_kind = request.param.split("/")
    stores = open_store(request, store_kind, tmp_path)
    store = next(stores)
    if feed_kind == "in-process":
        yield Rig(store, InProcessChangeFeed(store, idle_check=0.05, retry_delay=0.05))
    else:
        stream: str = request.getfixturevalue("redis_stream")
        feed = RedisChangeFeed(store, REDIS_URL, stream=stream, idle_check=0.1, retry_delay=0.05)
        yield Rig(store, feed)
        asyncio.run(feed.aclose())
    next(stores, None)


async def test_backlog_then_live_changes_arrive_in_order(rig: Rig) -> None:
    rig.commit_many(3)
    async with aclosing(rig.feed.subscribe(0)) as changes:
        backlog = await take(changes, 3)
        committer = threading.Thread(target=rig.commit_many, args=(4,))
        committer.start()
        live = await take(changes, 4)
        committer.join()
    assert [c.seq for c in backlog + live] == list(range(1, 8))
    assert [c.key for c in backlog + live] == ["k0", "k1", "k2", "k0", "k1", "k2", "k3"]


async def test_a_subscriber_resumes_after_any_seq_without_repeats(rig: Rig) -> None:
    latest = rig.commit_many(6)[-1]
    for start in range(latest + 1):
        async with aclosing(rig.feed.subscribe(start)) as changes:
            replayed = await take(changes, latest - start)
            assert [c.seq for c in replayed] == list(range(start + 1, latest + 1))
            latest = rig.commit(f"after-{start}")
            (following,) = await take(changes, 1)
            # the next thing seen is the new change, not a repeat of the backlog
            assert (following.seq, following.key) == (latest, f"after-{start}")


async def test_changes_arrive_with_their_content(rig: Rig) -> None:
    item = {"key": "f", "version": 4, "on": True, "variations": [True, False], "nested": {"a": []}}
    rig.commit(item=item)
    with rig.store.unit_of_work() as uow:
        seq = uow.changes.append(
            project="p", environment="prod", kind="segment", key="s", version=9, item=None, at=T0
        )
    rig.feed.publish(seq)
    async with aclosing(rig.feed.subscribe(0)) as changes:
        first, second = await take(changes, 2)
    assert first == Change(
        seq=1, project="p", environment="e", kind="flag", key="f", version=1, item=item, at=T0
    )
    assert second == Change(
        seq=2, project="p", environment="prod", kind="segment", key="s", version=9, item=None, at=T0
    )


async def test_a_change_whose_announcement_was_lost_still_arrives(rig: Rig) -> None:
    async with aclosing(rig.feed.subscribe(0)) as changes:
        rig.commit("silent", announce=False)
        (change,) = await take(changes, 1)
        assert change.key == "silent"
        rig.commit("loud")
        (change,) = await take(changes, 1)
        assert (change.seq, change.key) == (2, "loud")


async def test_racing_committers_deliver_each_change_once_in_order(rig: Rig) -> None:
    writers, per_writer = 4, 10
    async with aclosing(rig.feed.subscribe(0)) as changes:
        threads = [
            threading.Thread(target=rig.commit_many, args=(per_writer,)) for _ in range(writers)
        ]
        for thread in threads:
            thread.start()
        received = await take(changes, writers * per_writer)
        for thread in threads:
            thread.join()
    assert [c.seq for c in received] == list(range(1, writers * per_writer + 1))


async def test_every_subscriber_gets_every_change(rig: Rig) -> None:
    rig.commit_many(2)
    async with (
        aclosing(rig.feed.subscribe(0)) as first,
        aclosing(rig.feed.subscribe(1)) as second,
    ):
        rig.commit_many(2)
        assert [c.seq for c in await take(first, 4)] == [1, 2, 3, 4]
        assert [c.seq for c in await take(second, 3)] == [2, 3, 4]


async def test_latest_seq_follows_commits(rig: Rig) -> None:
    assert await rig.feed.latest_seq() == 0
    rig.commit_many(3)
    assert await rig.feed.latest_seq() == 3


async def test_a_subscriber_crosses_an_epoch_start_from_any_position(rig: Rig) -> None:
    rig.commit_many(2)
    epoch = start_epoch(rig.store, "restore", at=T0, feed=rig.feed)
    marker = epoch.started_after_seq + SEQ_GAP + 1
    after = rig.commit("after")
    assert after == marker + 1
    expected = [(1, 1, "flag"), (2, 1, "flag"), (marker, 2, "epoch"), (after, 2, "flag")]
    for start in (0, 2, 3, marker - 1, marker):
        async with aclosing(rig.feed.subscribe(start)) as changes:
            wanted = [entry for entry in expected if entry[0] > start]
            got = await take(changes, len(wanted))
            assert [(c.seq, c.epoch, c.kind) for c in got] == wanted
            later = rig.commit(f"later-{start}")
            (following,) = await take(changes, 1)
            assert (following.seq, following.epoch) == (later, 2)
            expected.append((later, 2, "flag"))
    assert await rig.feed.latest_seq() == expected[-1][0]


# --- Redis Streams specifics ------------------------------------------------------------------


@pytest.fixture(params=[pytest.param("memory", marks=pytest.mark.service)])
def redis_rig(request: pytest.FixtureRequest, tmp_path: Path, redis_stream: str) -> Iterator[Rig]:
    stores = open_store(request, request.param, tmp_path)
    store = next(stores)
    feed = RedisChangeFeed(store, REDIS_URL, stream=redis_stream, idle_check=0.1, retry_delay=0.05)
    yield Rig(store, feed)
    asyncio.run(feed.aclose())


def stream_seqs(stream: str) -> list[int]:
    with redis.Redis.from_url(REDIS_URL) as client:
        return [int(entry_id.split(b"-")[0]) for entry_id, _ in client.xrange(stream)]


def test_stream_entry_ids_are_seqs_and_repeated_announcements_add_nothing(
    redis_rig: Rig, redis_stream: str
) -> None:
    redis_rig.commit_many(3)
    redis_rig.feed.publish(3)
    redis_rig.feed.publish(2)
    assert stream_seqs(redis_stream) == [1, 2, 3]


def test_an_announcement_copies_every_change_the_stream_lacks(
    redis_rig: Rig, redis_stream: str
) -> None:
    redis_rig.commit("a", announce=False)
    redis_rig.commit("b", announce=False)
    redis_rig.commit("c")
    assert stream_seqs(redis_stream) == [1, 2, 3]


async def test_changes_lost_by_redis_come_from_the_outbox(
    redis_rig: Rig, redis_stream: str
) -> None:
    # backfill of one and a long idle check: only filling the hole from the outbox can deliver
    feed = RedisChangeFeed(
        redis_rig.store, REDIS_URL, stream=redis_stream, max_backfill=1, idle_check=DEADLINE * 2
    )
    rig = Rig(redis_rig.store, feed)
    rig.commit_many(4)
    async with aclosing(feed.subscribe(0)) as live:
        assert [c.seq for c in await take(live, 4)] == [1, 2, 3, 4]
        with redis.Redis.from_url(REDIS_URL) as client:
            client.delete(redis_stream)  # what a Redis restart without persistence does
        rig.commit("x", announce=False)
        rig.commit("y", announce=False)
        rig.commit("z")
        assert stream_seqs(redis_stream) == [7]
        assert [(c.seq, c.key) for c in await take(live, 3)] == [(5, "x"), (6, "y"), (7, "z")]
    assert feed.outbox_reads >= 1
    async with aclosing(feed.subscribe(0)) as late:
        assert [c.seq for c in await take(late, 7)] == list(range(1, 8))
    await feed.aclose()


async def test_a_foreign_entry_in_the_stream_is_replaced_by_the_outbox_change(
    redis_rig: Rig, redis_stream: str
) -> None:
    redis_rig.commit("a")
    with redis.Redis.from_url(REDIS_URL) as client:
        client.xadd(redis_stream, {"junk": "1"}, id="2-0")
    redis_rig.commit("b", announce=False)
    async with aclosing(redis_rig.feed.subscribe(0)) as changes:
        assert [(c.seq, c.key) for c in await take(changes, 2)] == [(1, "a"), (2, "b")]


async def test_entries_of_a_lost_history_are_skipped_once_an_epoch_replaced_them(
    redis_rig: Rig, redis_stream: str
) -> None:
    redis_rig.commit_many(3)
    # The stream still holds what a database handed out before it was restored to seq 3: the
    # restore lost seqs 4 and 5. `dr new-epoch` then started epoch 2 after seq 3.
    with redis.Redis.from_url(REDIS_URL) as client:
        for seq in (4, 5):
            lost = Change(
                seq=seq,
                project="p",
                environment="e",
                kind="flag",
                key="lost",
                version=9,
                item={"key": "lost"},
                at=T0,
            )
            client.xadd(redis_stream, encode_entry(lost), id=f"{seq}-0")
    epoch = start_epoch(redis_rig.store, "restore", at=T0)  # by `dr new-epoch`: no Redis
    marker = epoch.started_after_seq + SEQ_GAP + 1
    expected = [(1, "k0"), (2, "k1"), (3, "k2"), (marker, "2")]
    for start in (0, 3, 5):
        async with aclosing(redis_rig.feed.subscribe(start)) as changes:
            wanted = [entry for entry in expected if entry[0] > start]
            got = await take(changes, len(wanted))
            assert [(c.seq, c.key) for c in got] == wanted
            after = redis_rig.commit(f"after-{start}")
            (following,) = await take(changes, 1)
            assert (following.seq, following.epoch) == (after, 2)
            expected.append((after, f"after-{start}"))
    assert stream_seqs(redis_stream)[:5] == [1, 2, 3, 4, 5]
    assert isinstance(redis_rig.feed, RedisChangeFeed)
    assert redis_rig.feed.foreign_entries >= 4
