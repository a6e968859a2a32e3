"""A delivery node's data age: zero while the feed's head is what the node holds, growing from
then on while the feed cannot be read (the in-process feed hides an unreachable database inside
its subscription, so the node's own `feed_connected` says nothing of it) or while the node is
behind; from disk, the age of the snapshots it loaded; unknown before either."""

from __future__ import annotations

from pathlib import Path

from delivery_support import ENVIRONMENT, FixedFeed, change, environment, flag
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode
from flagstaff_server.delivery.freshness import Freshness
from support.deadlines import eventually


class Wall:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


BACKLOG = [change(1, "environment", ENVIRONMENT, environment()), change(2, "flag", "a", flag("a"))]


async def test_the_age_grows_while_the_feed_cannot_be_read_or_the_node_is_behind() -> None:
    feed, wall = FixedFeed(BACKLOG), Wall()
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
    first = DeliveryNode(FixedFeed(BACKLOG), DeliveryConfig(data_dir=tmp_path))
    async with first.lifespan():
        await eventually(lambda: first.current)
    position_written = (tmp_path / "position.json").stat().st_mtime
    wall = Wall()
    wall.now = position_written + 120
    down = FixedFeed([])
    down.broken = True
    node = DeliveryNode(down, DeliveryConfig(data_dir=tmp_path))
    freshness = Freshness(node, wall=wall)
    async with node.lifespan():
        await freshness.start()
        try:
            assert freshness.age_seconds() == 120.0
        finally:
            await freshness.stop()
