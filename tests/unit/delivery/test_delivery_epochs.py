"""Delivery across database epochs, in-process: a node behind a new epoch's start continues; a
node ahead of it (its database was restored, or failed over to a standby that lacked its last
changes) resynchronises in full from the store, live or after a restart from disk, and its
streams get full data (FDv1 `put`, FDv2 `xfer-full` with a `version` above what they held);
selectors name the epoch."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from break_glass_support import Operator
from delivery_support import ENVIRONMENT, PROJECT, Outbox, environment, flag
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.adapters.process_feed import InProcessChangeFeed
from flagstaff_server.asgi import Receive, Scope, Send
from flagstaff_server.break_glass import BreakGlassApp, KillSwitch
from flagstaff_server.break_glass import handles as break_glass_path
from flagstaff_server.delivery import DeliveryConfig, DeliveryNode, selector
from flagstaff_server.delivery.fanout import Channel
from flagstaff_server.delivery.position import FeedPosition, against, at_marker
from flagstaff_server.delivery.snapshot_file import decode_position, encode_position
from flagstaff_server.services.epochs import SEQ_GAP, start_epoch
from flagstaff_server.services.ports import Change, ChangeFeed, EpochRecord
from support.deadlines import eventually
from support.in_process import asgi_client

T0 = datetime(2026, 3, 1, tzinfo=UTC)


@dataclass
class Database:
    store: InMemoryStore
    feed: InProcessChangeFeed
    outbox: Outbox

    def epochs(self) -> list[EpochRecord]:
        with self.store.unit_of_work(read_only=True) as uow:
            return uow.epochs.list()


def database() -> Database:
    store = InMemoryStore()
    feed = InProcessChangeFeed(store, idle_check=0.05, retry_delay=0.05)
    return Database(store, feed, Outbox(store, feed))


def write_history(*databases: Database) -> None:
    """The history both copies share: an environment and flag `a` at version 1."""
    for db in databases:
        db.outbox.write("environment", ENVIRONMENT, environment())
        db.outbox.write("flag", "a", flag("a", 1))


class SwitchedFeed:
    """The feed of whichever database the node's URL points at: `switch` ends the current
    subscription (as a lost connection does) and serves the next one from `feed`."""

    def __init__(self, feed: ChangeFeed) -> None:
        self.feed = feed
        self._switched = asyncio.Event()

    def switch(self, feed: ChangeFeed) -> None:
        self.feed = feed
        self._switched.set()

    def publish(self, seq: int) -> None:
        self.feed.publish(seq)

    async def subscribe(self, after_seq: int) -> AsyncIterator[Change]:
        self._switched = switched = asyncio.Event()
        arrived: asyncio.Queue[Change] = asyncio.Queue()

        async def pump() -> None:
            async with aclosing(self.feed.subscribe(after_seq)) as changes:
                async for change in changes:
                    arrived.put_nowait(change)

        pumping = asyncio.create_task(pump())
        try:
            while True:
                following = asyncio.create_task(arrived.get())
                ended = asyncio.create_task(switched.wait())
                await asyncio.wait({following, ended}, return_when=asyncio.FIRST_COMPLETED)
                ended.cancel()
                if not following.done():
                    following.cancel()
                    raise ConnectionError("the database behind the feed changed")
                yield following.result()
        finally:
            pumping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pumping

    async def latest_seq(self) -> int:
        return await self.feed.latest_seq()

    async def aclose(self) -> None:
        return None


def config(tmp_path: Path | None = None) -> DeliveryConfig:
    return DeliveryConfig(data_dir=tmp_path, persist_delay_seconds=0.01, feed_retry_seconds=0.05)


def served(node: DeliveryNode) -> dict[str, Any]:
    env = node.store.get(PROJECT, ENVIRONMENT)
    assert env is not None
    return env.snapshot.decoded()


def channels(node: DeliveryNode) -> tuple[Channel, Channel]:
    """An FDv1 and an FDv2 stream held open on the environment (what a request registers)."""
    env = node.store.get(PROJECT, ENVIRONMENT)
    assert env is not None
    v1 = Channel("v1", limit=64, deadline=float("inf"), now=0.0)
    v2 = Channel("v2", limit=64, deadline=float("inf"), now=0.0)
    env.broadcaster.channels.update((v1, v2))
    return v1, v2


def events(channel: Channel) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for chunk in channel.pending:
        for block in chunk.decode().split("\n\n"):
            lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
            if "event" in lines:
                found.append((lines["event"], orjson.loads(lines["data"])))
    return found


async def test_a_node_behind_the_epoch_start_continues_into_the_new_epoch() -> None:
    db = database()
    write_history(db)
    node = DeliveryNode(db.feed, config(), epochs=db.epochs)
    async with node.lifespan():
        await eventually(lambda: node.position == 2)
        v1, v2 = channels(node)
        epoch = start_epoch(db.store, "promote", at=T0, feed=db.feed)
        seq = db.outbox.write("flag", "a", flag("a", 1002))
        await eventually(lambda: node.position == seq)
        v1_events, v2_events = events(v1), events(v2)
    assert (node.epoch, epoch.started_after_seq) == (2, 2)
    assert node.counts["resync"] == 0
    assert served(node)["flags"]["a"]["version"] == 1002
    assert [name for name, _ in v1_events] == ["patch"]
    assert [name for name, _ in v2_events] == ["put-object", "payload-transferred"]
    state = v2_events[-1][1]["state"]
    assert state.startswith("fs2.")
    assert state.split(".")[2:4] == ["2", str(seq)]


@pytest.mark.parametrize("with_epochs", [True, False], ids=["epochs-read", "marker-only"])
async def test_a_node_ahead_of_a_restored_database_resyncs_and_streams_get_full_data(
    with_epochs: bool,
) -> None:
    lost, restored = database(), database()
    write_history(lost, restored)
    lost.outbox.write("flag", "a", flag("a", 2, on=False))  # lost by the restore
    lost.outbox.write("flag", "b", flag("b", 1))
    restored_epoch = start_epoch(restored.store, "restore", at=T0)
    feed = SwitchedFeed(lost.feed)
    node = DeliveryNode(feed, config(), epochs=restored.epochs if with_epochs else None)
    async with node.lifespan():
        await eventually(lambda: node.position == 4)
        v1, v2 = channels(node)
        held_version = node.store.get(PROJECT, ENVIRONMENT).snapshot.seq  # type: ignore[union-attr]
        feed.switch(restored.feed)
        await eventually(lambda: node.counts["resync"] == 1, what="a full resync")
        after = restored.outbox.write("flag", "c", flag("c", 1))
        await eventually(lambda: node.position == after)
        v1_events, v2_events = events(v1), events(v2)
    marker = restored_epoch.started_after_seq + SEQ_GAP + 1
    assert node.epoch == 2
    assert served(node) == {"flags": {"a": flag("a", 1), "c": flag("c", 1)}, "segments": {}}
    assert v1_events[0] == (
        "put",
        {"path": "/", "data": {"flags": {"a": flag("a", 1)}, "segments": {}}},
    )
    assert [name for name, _ in v1_events[1:]] == ["patch"]
    assert v2_events[0][1]["payloads"][0]["intentCode"] == "xfer-full"
    commit = next(data for name, data in v2_events if name == "payload-transferred")
    assert commit["version"] == marker > held_version
    assert commit["state"].split(".")[2:4] == ["2", str(marker)]


async def test_a_node_restarted_ahead_of_the_database_resyncs_before_it_continues(
    tmp_path: Path,
) -> None:
    lost, restored = database(), database()
    write_history(lost, restored)
    lost.outbox.write("flag", "b", flag("b", 1))
    node = DeliveryNode(lost.feed, config(tmp_path))
    async with node.lifespan():
        await eventually(lambda: node.position == 3)
    start_epoch(restored.store, "restore", at=T0)
    again = DeliveryNode(restored.feed, config(tmp_path), epochs=restored.epochs)
    async with again.lifespan():
        assert served(again)["flags"].keys() == {"a", "b"}  # from disk until resynced
        await eventually(lambda: again.counts["resync"] == 1)
        assert served(again)["flags"].keys() == {"a"}
        await eventually(
            lambda: decode_position((tmp_path / "position.json").read_bytes()).epoch == 2,
            what="the new position on disk",
        )
    written = decode_position((tmp_path / "position.json").read_bytes())
    assert (written.epoch, written.epoch_started_after) == (2, 2)
    third = DeliveryNode(restored.feed, config(tmp_path), epochs=restored.epochs)
    async with third.lifespan():
        await eventually(lambda: third.current)
        assert third.counts["resync"] == 0
        assert served(third)["flags"].keys() == {"a"}


async def test_a_change_of_an_epoch_the_node_never_entered_is_not_applied() -> None:
    db = database()
    write_history(db)
    node = DeliveryNode(db.feed, config())
    node.apply(
        Change(
            seq=9,
            project=PROJECT,
            environment=ENVIRONMENT,
            kind="flag",
            key="x",
            version=1,
            item=flag("x"),
            at=T0,
            epoch=3,
        )
    )
    assert node.resync_reason is not None
    assert node.position == 0
    assert node.counts["change_foreign"] == 1


async def test_an_fdv2_basis_from_before_the_epoch_start_gets_a_delta_one_past_it_everything() -> (
    None
):
    lost, restored = database(), database()
    write_history(lost, restored)
    node = DeliveryNode(restored.feed, config())
    async with node.lifespan():
        await eventually(lambda: node.position == 2)
        before = node.store.get(PROJECT, ENVIRONMENT).snapshot.state  # type: ignore[union-attr]
        start_epoch(restored.store, "restore", at=T0, feed=restored.feed)
        seq = restored.outbox.write("flag", "a", flag("a", 1001, on=False))
        await eventually(lambda: node.position == seq)
    snapshot = node.store.get(PROJECT, ENVIRONMENT).snapshot  # type: ignore[union-attr]
    assert snapshot.transfer_for(before).code == "xfer-changes"
    legacy = before.replace("fs2.", "fs1.", 1).replace(".1.", ".", 1)
    assert snapshot.transfer_for(legacy).code == "xfer-changes"
    lost_seq = lost.outbox.write("flag", "a", flag("a", 2))  # seq 3 of the lost history
    lost_state = selector.encode_state(snapshot.tag, 1, lost_seq, snapshot.digest)
    assert snapshot.transfer_for(lost_state).code == "xfer-full"


# the rule itself ---------------------------------------------------------------------------------


def epoch(number: int, after: int, at_ms: int = 0) -> EpochRecord:
    return EpochRecord(
        epoch=number,
        started_after_seq=after,
        at=datetime.fromtimestamp(at_ms / 1000, UTC),
        reason="test",
    )


HISTORY = [epoch(1, 0), epoch(2, 50, 7000)]


@pytest.mark.parametrize(
    ("position", "verdict"),
    [
        (FeedPosition(seq=0), "continue"),
        (FeedPosition(seq=40), "continue"),
        (FeedPosition(seq=50), "continue"),
        (FeedPosition(seq=51), "resync"),
        (
            FeedPosition(seq=1_000_060, epoch=2, epoch_started_after=50, epoch_at_ms=7000),
            "continue",
        ),
        (FeedPosition(seq=1_000_060, epoch=2, epoch_started_after=75, epoch_at_ms=7000), "resync"),
        (FeedPosition(seq=1_000_060, epoch=2, epoch_started_after=50, epoch_at_ms=8000), "resync"),
        (FeedPosition(seq=2_000_060, epoch=3, epoch_started_after=1_000_070), "resync"),
    ],
    ids=[
        "fresh",
        "behind",
        "at-start",
        "ahead",
        "same-epoch",
        "other-start",
        "other-time",
        "unknown",
    ],
)
def test_a_position_is_checked_against_the_databases_epochs(
    position: FeedPosition, verdict: str
) -> None:
    assert against(position, HISTORY) == verdict


def test_a_marker_is_entered_from_behind_and_resyncs_from_ahead_or_a_second_start() -> None:
    assert at_marker(FeedPosition(seq=50), 2, 50) == "enter"
    assert at_marker(FeedPosition(seq=51), 2, 50) == "resync"
    in_two = FeedPosition(seq=1_000_060, epoch=2, epoch_started_after=50)
    assert at_marker(in_two, 2, 40) == "resync"
    assert at_marker(in_two, 1, 0) == "resync"


def test_the_position_file_keeps_the_epoch_and_reads_an_old_one_as_epoch_one() -> None:
    position = FeedPosition(seq=1_000_061, epoch=2, epoch_started_after=60, epoch_at_ms=123)
    assert decode_position(encode_position(position)) == position
    assert decode_position(b'{"format": 1, "position": 42}') == FeedPosition(seq=42)
    for bad in (b'{"position": -1}', b'{"position": 3, "epoch": 0}', b'{"position": true}'):
        with pytest.raises(ValueError, match=r"count|at least 1"):
            decode_position(bad)


async def test_a_break_glass_override_stays_served_across_a_resync_with_a_higher_version(
    tmp_path: Path,
) -> None:
    operator = Operator.create(tmp_path / "keys")
    lost, restored = database(), database()
    write_history(lost, restored)
    lost.outbox.write("flag", "a", flag("a", 2))  # lost by the restore
    start_epoch(restored.store, "restore", at=T0)
    feed = SwitchedFeed(lost.feed)
    node = DeliveryNode(feed, config(), epochs=restored.epochs)
    switch = KillSwitch(node, keyring=operator.keyring(), tick_seconds=3600)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and break_glass_path(scope["path"]):
            await BreakGlassApp(lambda: switch)(scope, receive, send)
        else:
            await node.app(scope, receive, send)

    async with node.lifespan(), asgi_client(app, base_url="http://n") as client:
        await switch.start()
        await eventually(lambda: node.position == 3)
        pushed = await client.post(
            "/break-glass/overrides",
            content=orjson.dumps(operator.override("a", project=PROJECT, environment=ENVIRONMENT)),
        )
        assert pushed.status_code == 200, pushed.text
        overridden = served(node)["flags"]["a"]
        assert overridden["on"] is False
        v1, _v2 = channels(node)
        feed.switch(restored.feed)
        await eventually(lambda: node.counts["resync"] == 1)
        after = served(node)["flags"]["a"]
        v1_events = events(v1)
        await switch.stop()
    assert after["on"] is False  # still overridden, now on the restored flag
    assert after["version"] > overridden["version"]
    (name, put), *_ = v1_events
    assert name == "put"
    assert put["data"]["flags"]["a"] == after
