"""Database epochs (docs/storage.md, "Epochs"): starting one on a promoted or restored database,
and starting one by itself when a writer finds the PostgreSQL primary on another history than
the current epoch recorded. An epoch start is one transaction: the epoch row, the change counter
moved `SEQ_GAP` on, every flag and segment version moved `VERSION_GAP` on, and a marker change
(kind "epoch") that tells delivery nodes where the epoch began.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from flagstaff_server.domain.version import jumped_flag, jumped_segment
from flagstaff_server.services.ports import (
    ChangeFeed,
    DatabaseTimeline,
    EpochRecord,
    JsonObject,
    Store,
    UnitOfWork,
)

SEQ_GAP = 1_000_000
"""How far the change counter moves at an epoch start: the new primary's seqs are above anything
the old one can have handed out that did not replicate (or that a restore lost), as long as it
handed out fewer than this many."""

VERSION_GAP = 1_000
"""How far every flag and segment version moves at an epoch start, so a (key, version) an SDK
saw from the old primary is never reused with other content (fewer than this many lost edits
of one item)."""


_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_item(record: EpochRecord) -> JsonObject:
    """The marker change's `item`: what a delivery node needs to tell whether it was ahead."""
    return {
        "epoch": record.epoch,
        "startedAfterSeq": record.started_after_seq,
        "timeline": record.timeline,
        "systemId": record.system_id,
        "at": (record.at - _UNIX_EPOCH) // timedelta(milliseconds=1),
        "reason": record.reason,
    }


def epoch_of_item(item: JsonObject | None) -> tuple[int, int] | None:
    """(epoch, started-after seq) from a marker change's item; None when it is not one."""
    if not isinstance(item, dict):
        return None
    epoch, after = _count(item.get("epoch")), _count(item.get("startedAfterSeq"))
    return None if epoch is None or after is None else (epoch, after)


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def begin_epoch(
    uow: UnitOfWork,
    *,
    reason: str,
    timeline: int | None,
    system_id: str | None,
    at: datetime,
) -> tuple[EpochRecord, int]:
    """Start the next epoch inside `uow`; returns it with the seq of its marker change."""
    record = uow.epochs.begin(
        reason=reason, timeline=timeline, system_id=system_id, at=at, seq_gap=SEQ_GAP
    )
    jump_versions(uow)
    seq = uow.changes.append(
        project="",
        environment="",
        kind="epoch",
        key=str(record.epoch),
        version=record.epoch,
        item=epoch_item(record),
        at=at,
    )
    return record, seq


def jump_versions(uow: UnitOfWork) -> None:
    """Move every flag's and segment's versions `VERSION_GAP` on. No change records: delivery
    keeps serving the versions it has for items that did not change (same content), and the
    next edit of each is above both those and anything the old primary handed out."""
    for project in uow.projects.list():
        for flag in uow.flags.list(project.key):
            doc = jumped_flag(flag.doc, VERSION_GAP)
            jumped = replace(flag, version=int(doc["_version"]), doc=doc)
            uow.flags.replace(jumped, expected_version=flag.version)
    for environment in uow.environments.list():
        for segment in uow.segments.list(environment.project, environment.key):
            doc = jumped_segment(segment.doc, VERSION_GAP)
            jumped_record = replace(segment, version=int(doc["version"]), doc=doc)
            uow.segments.replace(jumped_record, expected_version=segment.version)


def start_epoch(
    store: Store,
    reason: str,
    timeline: int | None = None,
    *,
    at: datetime | None = None,
    feed: ChangeFeed | None = None,
) -> EpochRecord:
    """Start a new epoch now (after a promotion or a restore from backup). `timeline`: the
    PostgreSQL timeline it begins on; by default the one the database reports (None on SQLite).
    Raises what the store raises for a standby (it takes no writes). `follow_timeline` is the
    idempotent form for a promotion."""
    moment = at or datetime.now(UTC)
    with store.unit_of_work() as uow:
        found = uow.epochs.timeline()
        record, seq = begin_epoch(
            uow,
            reason=reason,
            timeline=timeline if timeline is not None else _timeline_of(found),
            system_id=None if found is None else found.system_id,
            at=moment,
        )
    if feed is not None:
        feed.publish(seq)
    return record


def follow_timeline(
    store: Store,
    reason: str = "timeline",
    *,
    at: datetime | None = None,
    feed: ChangeFeed | None = None,
) -> EpochRecord | None:
    """Start an epoch only when the database is a PostgreSQL primary on another history
    (timeline or cluster) than the current epoch recorded; None when it is on the same one, or
    has none to compare (SQLite, a standby). Safe to repeat: what `dr promote` calls."""
    moment = at or datetime.now(UTC)
    with store.unit_of_work() as uow:
        found = uow.epochs.timeline()
        started = None if found is None else follow_in(uow, found, reason=reason, at=moment)
    if started is None:
        return None
    record, seq = started
    if feed is not None:
        feed.publish(seq)
    return record


def follow_in(
    uow: UnitOfWork, found: DatabaseTimeline, *, reason: str, at: datetime
) -> tuple[EpochRecord, int] | None:
    """`follow_timeline` inside `uow`, for the primary's history `found`: the new epoch and its
    marker seq, or None (the current epoch is on `found`; an epoch that recorded no history
    adopts it)."""
    if _matches(uow.epochs.current(), found):
        return None
    uow.epochs.lock()  # decided again under the lock: another writer may have started it
    current = uow.epochs.current()
    if _matches(current, found):
        return None
    if current.timeline is None:
        uow.epochs.record_timeline(current.epoch, found.timeline, found.system_id)
        return None
    return begin_epoch(
        uow, reason=reason, timeline=found.timeline, system_id=found.system_id, at=at
    )


def _matches(current: EpochRecord, found: DatabaseTimeline) -> bool:
    if current.timeline != found.timeline:
        return False
    return (
        current.system_id is None
        or found.system_id is None
        or (current.system_id == found.system_id)
    )


def _timeline_of(found: DatabaseTimeline | None) -> int | None:
    return None if found is None else found.timeline


class EpochGuard:
    """A writer's check, at the start of every writing transaction, that the database is still
    on the history the current epoch recorded (starting a new epoch first when it is not). The
    histories seen to match are remembered, so the check costs a query once per connection
    (`uow.epochs.timeline()` caches per connection) and nothing afterwards."""

    def __init__(self) -> None:
        self._confirmed: set[DatabaseTimeline] = set()
        self._lock = threading.Lock()

    def check(self, uow: UnitOfWork, at: datetime) -> int:
        """The seq of the marker change when an epoch was started in `uow`, else 0."""
        found = uow.epochs.timeline()
        if found is None:
            return 0
        with self._lock:
            if found in self._confirmed:
                return 0
        current = uow.epochs.current()
        if _matches(current, found) and current.timeline is not None:
            with self._lock:
                self._confirmed.add(found)
            return 0
        # Not remembered until a later transaction sees it recorded: this one may roll back.
        started = follow_in(uow, found, reason="timeline", at=at)
        return 0 if started is None else started[1]

    def check_store(
        self, store: Store, at: datetime, feed: ChangeFeed | None = None
    ) -> EpochRecord | None:
        """The same check outside any write (the API's background watch): a read, and a write
        only when the primary's history differs from the current epoch's; the epoch it
        started, if any."""
        with store.unit_of_work(read_only=True) as uow:
            found = uow.epochs.timeline()
            if found is None:
                return None
            with self._lock:
                if found in self._confirmed:
                    return None
            current = uow.epochs.current()
            if _matches(current, found) and current.timeline is not None:
                with self._lock:
                    self._confirmed.add(found)
                return None
        return follow_timeline(store, "timeline", at=at, feed=feed)
