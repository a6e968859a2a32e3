"""A delivery node's data age: zero while the feed's head is what the node holds, growing from
then on while the feed cannot be read (the in-process feed hides an unreachable database inside
its subscription, so the node's own `feed_connected` says nothing of it) or while the node is
behind; from disk, the age of the snapshots it loaded; unknown before either."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from delivery_support import ENVIRONMENT, change, environment, flag
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery.freshness import Freshness
from flagstaff_server.services.ports import Change
from support.deadlines import eventually


class Feed:
    """A backlog, then silence; `head` is what `latest_seq` says, `broken` makes it fail."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes
        self.head = changes[-1].seq if changes else 0
        self.broken = False

    def publish(self, seq: int) -> None:
        return None

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        for item in self.changes:
            if item.seq > after_seq:
                yield item
        await asyncio.Event().wait()

    async def latest_seq(self) -> int:
        if self.broken:
            raise ConnectionError("database down")
        return self.head

    async def aclose(self) -> None:
        return None


class Wall:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


BACKLOG = [change(1, "environment", ENVIRONMENT, environment()), change(2, "flag", "a", flag("a"))]


async def test_the_age_grows_while_the_feed_cannot_be_read_or_the_node_is_behind() -> None:
    feed, wall = Feed(BACKLOG), Wall()
    node = DeliveryNode(feed, DeliveryConfig())
    freshness = Freshness(node, wall=wall)
    assert freshness.age_seconds() is None
    async with node.lifespan():
        await eventually(lambda: node.current)
        await freshness.check()
        assert freshness.age_seconds() == 0.0
        feed.broken = True
        wall.now += 40
        await freshness.check()
        assert freshness.age_seconds() == 40.0
        assert freshness.checks_failed == 1
        feed.broken, feed.head = False, 3  # a change the node has not received
        wall.now += 5
        await freshness.check()
        assert freshness.age_seconds() == 45.0
        feed.head = 2
        await freshness.check()
        assert freshness.age_seconds() == 0.0


async def test_a_node_started_from_disk_counts_from_its_snapshots(tmp_path: Path) -> None:
    first = DeliveryNode(Feed(BACKLOG), DeliveryConfig(data_dir=tmp_path))
    async with first.lifespan():
        await eventually(lambda: first.current)
    position_written = (tmp_path / "position.json").stat().st_mtime
    wall = Wall()
    wall.now = position_written + 120
    down = Feed([])
    down.broken = True
    node = DeliveryNode(down, DeliveryConfig(data_dir=tmp_path))
    freshness = Freshness(node, wall=wall)
    async with node.lifespan():
        await freshness.start()
        try:
            assert freshness.age_seconds() == 120.0
        finally:
            await freshness.stop()
