"""Rebuilding a delivery node's data from the store's whole history: the feed replayed from seq
0 into a fresh snapshot store (epoch markers moving the position, operator notices set aside),
with the break-glass overlay's items on top, while the node's current snapshots go on serving.
Installing the result is the node's (`DeliveryNode.resync`).

The history is folded (`HistoryFold`): each item keeps its newest change as
`snapshot.apply_change` would decide (a version not above the held one is stale), and each
environment's snapshot is encoded once at the end. Applying the changes one by one re-encodes an
environment's whole body per change, which made a resync cost the history's length times the
size of an environment. Same snapshots (data, seq, epoch, digest, tombstones), no change logs
(a resync empties them anyway).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from flagstaff_server.delivery.credential import Credentials, decode_credentials
from flagstaff_server.delivery.position import FeedPosition
from flagstaff_server.delivery.snapshot import Item, Snapshot, encode_item, snapshot_of
from flagstaff_server.delivery.sse import ItemKind
from flagstaff_server.delivery.store import ItemCheck, SnapshotStore
from flagstaff_server.services.epochs import epoch_of_item
from flagstaff_server.services.ports import Change, ChangeFeed

log = logging.getLogger(__name__)

EnvironmentId = tuple[str, str]


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
    history = HistoryFold(check)
    if head > 0:
        async with contextlib.aclosing(feed.subscribe(0)) as changes:
            async for change in changes:
                if change.kind == "epoch":
                    marker = epoch_of_item(change.item)
                    after = position.epoch_started_after if marker is None else marker[1]
                    position = marker_position(change, change.epoch, after)
                else:
                    if change.kind == "notice":
                        notices.append(change)
                    history.add(change)
                    position = replace(position, seq=change.seq, epoch=change.epoch)
                if change.seq >= head:
                    break
    for snapshot, credentials in history.snapshots():
        staged.put(snapshot, credentials)
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


@dataclass(slots=True)
class _Folded:
    items: dict[tuple[ItemKind, str], tuple[int, Item | None]] = field(default_factory=dict)
    """Per item its newest version and encoding (None: deleted)."""
    seq: int = 0
    epoch: int = 1
    credentials: Credentials | None = None


class HistoryFold:
    def __init__(self, check: ItemCheck | None = None) -> None:
        self.check = check
        self._environments: dict[EnvironmentId, _Folded] = {}

    def add(self, change: Change) -> None:
        """One change of the history, in seq order (epoch markers and notices belong to no
        environment and are the caller's)."""
        env_id = (change.project, change.environment)
        if change.kind == "environment":
            if change.item is None:
                self._environments.pop(env_id, None)
                return
            try:
                credentials = decode_credentials(change.project, change.environment, change.item)
            except ValueError as exc:
                log.error("replay drops environment change (seq %d): %s", change.seq, exc)
                return
            self._environments.setdefault(env_id, _Folded()).credentials = credentials
            return
        if change.kind not in ("flag", "segment"):
            return
        kind: ItemKind = "flag" if change.kind == "flag" else "segment"
        folded = self._environments.setdefault(env_id, _Folded())
        held = folded.items.get((kind, change.key))
        if held is not None and held[0] >= change.version:
            return  # stale, as `apply_change` finds it
        encoded: Item | None = None
        if change.item is not None:
            try:
                if self.check is not None:
                    self.check(kind, change.item)
                encoded = encode_item(change.key, change.item, change.version)
            except ValueError as exc:
                log.error("replay drops %s %r (seq %d): %s", kind, change.key, change.seq, exc)
                return
        folded.items[(kind, change.key)] = (change.version, encoded)
        folded.seq, folded.epoch = change.seq, change.epoch

    def snapshots(self) -> list[tuple[Snapshot, Credentials | None]]:
        """Every environment the history leaves, with its credentials."""
        built: list[tuple[Snapshot, Credentials | None]] = []
        for (project, environment), folded in self._environments.items():
            flags: dict[str, Item] = {}
            segments: dict[str, Item] = {}
            tombstones: dict[tuple[ItemKind, str], int] = {}
            for (kind, key), (version, item) in folded.items.items():
                if item is None:
                    tombstones[(kind, key)] = version
                else:
                    (flags if kind == "flag" else segments)[key] = item
            snapshot = snapshot_of(
                project,
                environment,
                seq=folded.seq,
                epoch=folded.epoch,
                flags=flags,
                segments=segments,
                tombstones=tombstones,
            )
            built.append((snapshot, folded.credentials))
        return built
