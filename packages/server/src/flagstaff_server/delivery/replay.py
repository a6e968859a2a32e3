"""Rebuilding a delivery node's data from the store's whole history: the feed replayed from seq
0 into a fresh snapshot store (epoch markers moving the position, operator notices set aside),
with the break-glass overlay's items on top, while the node's current snapshots go on serving.
Installing the result is the node's (`DeliveryNode.resync`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace

from flagstaff_server.delivery.position import FeedPosition
from flagstaff_server.delivery.store import ItemCheck, SnapshotStore
from flagstaff_server.services.epochs import epoch_of_item
from flagstaff_server.services.ports import Change, ChangeFeed


@dataclass(frozen=True, slots=True)
class Replayed:
    staged: SnapshotStore
    position: FeedPosition
    """Where the replay ended: the feed's head when it began."""
    notices: list[Change]
    """Operator notices met on the way, for the node's side readers."""


async def replay_history(
    feed: ChangeFeed,
    current: SnapshotStore,
    *,
    log_limit: int,
    clock: Callable[[], float],
    check: ItemCheck | None,
) -> Replayed:
    """Every change up to the feed's head applied to a new store; `current`'s overlay (what
    break-glass overrides serve) put on top before any stream sees it. Raises what the feed
    raises."""
    staged = SnapshotStore(log_limit=log_limit, clock=clock, check=check)
    head = await feed.latest_seq()
    position = FeedPosition()
    notices: list[Change] = []
    if head > 0:
        async with contextlib.aclosing(feed.subscribe(0)) as changes:
            async for change in changes:
                if change.kind == "epoch":
                    marker = epoch_of_item(change.item)
                    after = position.epoch_started_after if marker is None else marker[1]
                    position = marker_position(change, change.epoch, after)
                else:
                    if staged.apply(change) == "notice":
                        notices.append(change)
                    position = replace(position, seq=change.seq, epoch=change.epoch)
                if change.seq >= head:
                    break
    overlay = current.overlay
    if overlay is not None:
        for env in staged.environments.values():
            for key, version, item in overlay.reset_bases(env.snapshot):
                staged.apply_overlay(env.project, env.key, key, version, item)
    return Replayed(staged, position, notices)


def marker_position(change: Change, epoch: int, started_after: int) -> FeedPosition:
    """The position at an epoch's marker change."""
    at = change.item.get("at") if change.item else None
    return FeedPosition(
        seq=change.seq,
        epoch=epoch,
        epoch_started_after=started_after,
        epoch_at_ms=at if isinstance(at, int) and not isinstance(at, bool) else 0,
    )
