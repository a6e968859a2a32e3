"""The merge rule: how a ChangeSet from any source changes what the client holds, so that an
older answer (a slow poll, a lagging region) never replaces newer data. Pure; no locks, no I/O.

FDv2: the selector orders data. A result computed against the selector we hold is applied as
the service says; one computed against something else applies only if its selector is newer.
FDv1 and local data: a `put`, a file or test data replaces everything; a poll replaces what we
learned before the poll was sent (a higher version wins) and anything from the disk cache or a
bootstrap file, while items learned since keep the higher version and are not deleted
by their absence; a patch or delete applies only with a higher item version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from flagstaff_core import Flag, FlagData, Segment

from flagstaff_sdk.change_set import ChangeSet, Selector
from flagstaff_sdk.protocol import tombstone_flag, tombstone_segment

Item = TypeVar("Item", Flag, Segment)


@dataclass(frozen=True, slots=True, kw_only=True)
class Holding:
    """The data a client evaluates with, its FDv2 selector, and when each item was learned
    (monotonic seconds; keyed `("flag"|"segment", key)`)."""

    data: FlagData = field(default_factory=FlagData)
    selector: Selector | None = None
    learned_at: Mapping[tuple[str, str], float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MergeResult:
    holding: Holding
    changed_flags: frozenset[str]
    changed_segments: frozenset[str]

    @property
    def changed(self) -> bool:
        return bool(self.changed_flags or self.changed_segments)


def merge(holding: Holding, change: ChangeSet, now: float) -> MergeResult | None:
    """The holding after `change` at monotonic time `now`; None when `change` is stale."""
    if change.current:
        return MergeResult(holding, frozenset(), frozenset())
    held = holding.selector
    if change.selector is not None:
        if held is not None and change.basis != held and change.selector.version <= held.version:
            return None
        if change.full:
            return _replace(holding, change, now, change.selector)
        guarded = change.basis != held
        return _upsert(holding, change, now, guarded=guarded, selector=change.selector)
    if change.full:
        if change.authoritative:
            return _replace(holding, change, now, None)
        return _poll(holding, change, now)
    return _upsert(holding, change, now, guarded=True, selector=held)


def _is_changed(old: Flag | Segment | None, new: Flag | Segment | None, unconfirmed: bool) -> bool:
    old_live = old if old is not None and not old.deleted else None
    new_live = new if new is not None and not new.deleted else None
    if old_live is None or new_live is None:
        return old_live is not new_live
    if old_live is new_live:
        return False
    # versions decide, except for initializer data, whose versions mean nothing to the service
    return unconfirmed or old_live.version != new_live.version


def _diff(
    kind: str,
    old: Mapping[str, Item],
    new: Mapping[str, Item],
    learned_at: Mapping[tuple[str, str], float],
) -> frozenset[str]:
    unknown = float("-inf")
    return frozenset(
        key
        for key in old.keys() | new.keys()
        if _is_changed(old.get(key), new.get(key), learned_at.get((kind, key)) == unknown)
    )


def _same(old: Mapping[str, Item], new: Mapping[str, Item]) -> bool:
    return len(old) == len(new) and all(new.get(key) is item for key, item in old.items())


def _result(
    holding: Holding,
    flags: dict[str, Flag],
    segments: dict[str, Segment],
    learned_at: dict[tuple[str, str], float],
    selector: Selector | None,
) -> MergeResult:
    old = holding.data
    changed_flags = _diff("flag", old.flags, flags, holding.learned_at)
    changed_segments = _diff("segment", old.segments, segments, holding.learned_at)
    if selector == holding.selector and _same(old.flags, flags) and _same(old.segments, segments):
        # nothing at all changed (tombstones included): keep the very same holding
        return MergeResult(holding, changed_flags, changed_segments)
    data = FlagData(flags=flags, segments=segments)
    return MergeResult(
        Holding(data=data, selector=selector, learned_at=learned_at),
        changed_flags,
        changed_segments,
    )


def _replace(
    holding: Holding, change: ChangeSet, now: float, selector: Selector | None
) -> MergeResult:
    flags = dict(change.flags)
    segments = dict(change.segments)
    learned_at = {("flag", key): now for key in flags}
    learned_at.update({("segment", key): now for key in segments})
    return _result(holding, flags, segments, learned_at, selector)


def _upsert(
    holding: Holding,
    change: ChangeSet,
    now: float,
    *,
    guarded: bool,
    selector: Selector | None,
) -> MergeResult:
    flags = dict(holding.data.flags)
    segments = dict(holding.data.segments)
    learned_at = dict(holding.learned_at)
    for kind, incoming, target in (
        ("flag", change.flags, flags),
        ("segment", change.segments, segments),
    ):
        for key, item in incoming.items():
            current = target.get(key)
            if guarded and current is not None and current.version >= item.version:
                continue
            target[key] = item  # type: ignore[assignment]
            learned_at[(kind, key)] = now
    return _result(holding, flags, segments, learned_at, selector)


def _poll(holding: Holding, change: ChangeSet, now: float) -> MergeResult:
    since = change.requested_at
    learned = holding.learned_at
    flags: dict[str, Flag] = _poll_items(
        "flag", holding.data.flags, change.flags, learned, since, tombstone_flag
    )
    segments: dict[str, Segment] = _poll_items(
        "segment", holding.data.segments, change.segments, learned, since, tombstone_segment
    )
    learned_at = dict(learned)
    for kind, old, new in (
        ("flag", holding.data.flags, flags),
        ("segment", holding.data.segments, segments),
    ):
        for key, item in new.items():
            if old.get(key) is not item:
                learned_at[(kind, key)] = now
    # a poll result is not a selector: data merged from it matches no FDv2 state
    return _result(holding, flags, segments, learned_at, None)


def _poll_items(
    kind: str,
    held: Mapping[str, Item],
    polled: Mapping[str, Item],
    learned_at: Mapping[tuple[str, str], float],
    since: float,
    tombstone: Callable[[str, int], Item],
) -> dict[str, Item]:
    out: dict[str, Item] = {}
    for key in held.keys() | polled.keys():
        current = held.get(key)
        incoming = polled.get(key)
        if incoming is None:
            assert current is not None
            if current.deleted or learned_at.get((kind, key), float("-inf")) >= since:
                out[key] = current  # learned after the poll was sent: the poll may be older
            else:
                out[key] = tombstone(key, current.version)
        elif current is None:
            out[key] = incoming
        else:
            learned = learned_at.get((kind, key), float("-inf"))
            if learned == float("-inf"):
                out[key] = incoming  # initializer data (cache, bootstrap) yields to the network
            else:
                # an equal version is the same item: keep ours (no spurious change events)
                out[key] = incoming if incoming.version > current.version else current
    return out
