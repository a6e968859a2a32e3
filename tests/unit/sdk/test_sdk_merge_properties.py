"""Properties of the merge rule over random histories: FDv1 patches in any order converge to the
newest version of every item, and replaying old or repeated changes never changes what is held."""

from __future__ import annotations

from flagstaff_core import Flag, decode_flag
from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.merge import Holding, merge
from flagstaff_sdk.protocol import tombstone_flag
from hypothesis import given, settings
from hypothesis import strategies as st


def versioned_flag(key: str, version: int) -> Flag:
    return decode_flag({"key": key, "version": version, "on": True, "variations": [version]})


KEYS = st.sampled_from(["a", "b", "c"])
CHANGE = st.tuples(KEYS, st.integers(min_value=1, max_value=20), st.booleans())


def as_change(key: str, version: int, deleted: bool) -> ChangeSet:
    item = tombstone_flag(key, version) if deleted else versioned_flag(key, version)
    return ChangeSet(full=False, flags={key: item})


def run(changes: list[tuple[str, int, bool]], holding: Holding | None = None) -> Holding:
    held = holding or Holding()
    for at, change in enumerate(changes):
        result = merge(held, as_change(*change), float(at))
        assert result is not None
        held = result.holding
    return held


@settings(max_examples=80)
@given(st.lists(CHANGE, max_size=20), st.randoms(use_true_random=False))
def test_patches_in_any_order_hold_the_newest_version_of_each_item(
    changes: list[tuple[str, int, bool]], rng: object
) -> None:
    shuffled = list(changes)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    newest: dict[str, int] = {}
    for key, version, _deleted in changes:
        newest[key] = max(newest.get(key, 0), version)
    held = run(shuffled)
    assert {key: item.version for key, item in held.data.flags.items()} == newest


@settings(max_examples=80)
@given(st.lists(CHANGE, min_size=1, max_size=20), st.data())
def test_replaying_any_earlier_change_leaves_the_holding_unchanged(
    changes: list[tuple[str, int, bool]], data: st.DataObject
) -> None:
    held = run(changes)
    replay = data.draw(st.sampled_from(changes))
    result = merge(held, as_change(*replay), 99.0)
    assert result is not None
    assert not result.changed
    assert result.holding.data == held.data
