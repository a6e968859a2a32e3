"""A delivery node's feed position, (epoch, seq), and the reconciliation rule of database epochs
(docs/delivery.md, "Epochs"): a node whose position lies in an older epoch at a seq past where
the next epoch began was ahead of the database's history (a restore or a failover lost what it
applied) and must resynchronise in full; a node at or behind that point just continues.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from flagstaff_server.services.ports import EpochRecord

Verdict = Literal["continue", "resync"]
MarkerVerdict = Literal["enter", "resync"]

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedPosition:
    seq: int = 0
    """The last feed seq the node applied (0: nothing yet)."""
    epoch: int = 1
    """The database epoch of that seq."""
    epoch_started_after: int = 0
    epoch_at_ms: int = 0
    """Where and when that epoch began: together with its number they tell the database's
    epoch from another history's epoch of the same number (a backup older than an epoch)."""


def millis(moment: datetime) -> int:
    return (moment - _UNIX_EPOCH) // timedelta(milliseconds=1)


def at_marker(position: FeedPosition, epoch: int, started_after: int) -> MarkerVerdict:
    """What to do on the marker change of epoch `epoch`, which began after `started_after` (its
    seq is above the node's: replays are dropped before this)."""
    if epoch <= position.epoch:
        # a feed of the node's own history never starts its epoch (or an older one) again
        return "resync"
    return "resync" if position.seq > started_after else "enter"


def against(position: FeedPosition, epochs: Sequence[EpochRecord]) -> Verdict:
    """Whether `position` is on the history the database's `epochs` (oldest first) describe."""
    if position.seq == 0:
        return "continue"
    mine = next((record for record in epochs if record.epoch == position.epoch), None)
    if mine is None:
        return "resync"  # an epoch the database never had (a backup older than it)
    if (mine.started_after_seq, millis(mine.at)) != (
        position.epoch_started_after,
        position.epoch_at_ms,
    ):
        return "resync"  # the same number, another start: another history
    later = [record for record in epochs if record.epoch > position.epoch]
    if later and position.seq > min(later, key=lambda r: r.epoch).started_after_seq:
        return "resync"  # ahead of where the next epoch began
    return "continue"
