"""The merge rule: FDv2 selectors order data; a poll never replaces what was learned after it
was sent; FDv1 patches need a higher version; a put, a file or test data replace everything."""

from __future__ import annotations

from typing import Any

from flagstaff_core import Flag, decode_flag
from flagstaff_sdk.change_set import ChangeSet, Selector
from flagstaff_sdk.merge import Holding, merge
from flagstaff_sdk.protocol import tombstone_flag


def f(key: str, version: int, value: Any = None) -> Flag:
    return decode_flag(
        {
            "key": key,
            "version": version,
            "on": True,
            "variations": [value if value is not None else f"{key}{version}"],
            "fallthrough": {"variation": 0},
        }
    )


def values(holding: Holding) -> dict[str, int]:
    return {key: flag.version for key, flag in holding.data.flags.items() if not flag.deleted}


def start(*flags: Flag, at: float = 0.0, selector: Selector | None = None) -> Holding:
    change = ChangeSet(full=True, flags={x.key: x for x in flags}, authoritative=True)
    result = merge(Holding(), change, at)
    assert result is not None
    if selector is None:
        return result.holding
    return Holding(
        data=result.holding.data, selector=selector, learned_at=result.holding.learned_at
    )


def apply(holding: Holding, change: ChangeSet, at: float) -> Holding:
    result = merge(holding, change, at)
    assert result is not None
    return result.holding


def test_a_poll_sent_before_a_stream_update_does_not_replace_it() -> None:
    held = start(f("a", 1), f("b", 1), at=0)
    # t=5: the poll is sent; t=6: the stream delivers a@2 and new c@1; t=7: the poll answers
    held = apply(held, ChangeSet(full=False, flags={"a": f("a", 2), "c": f("c", 1)}), 6)
    poll = ChangeSet(full=True, flags={"a": f("a", 1), "b": f("b", 1)}, requested_at=5)
    assert values(apply(held, poll, 7)) == {"a": 2, "b": 1, "c": 1}


def test_a_poll_removes_items_learned_before_it_was_sent_and_adds_newer_ones() -> None:
    held = start(f("a", 1), f("b", 1), at=0)
    poll = ChangeSet(full=True, flags={"a": f("a", 3), "d": f("d", 1)}, requested_at=5)
    result = merge(held, poll, 7)
    assert result is not None
    assert values(result.holding) == {"a": 3, "d": 1}
    assert result.changed_flags == {"a", "b", "d"}
    # the removal is a tombstone at the old version: an older copy cannot bring it back
    stale = ChangeSet(full=True, flags={"a": f("a", 3), "b": f("b", 1), "d": f("d", 1)})
    assert values(apply(result.holding, stale, 9)) == {"a": 3, "d": 1}


def test_fdv1_patches_and_deletes_need_a_higher_version() -> None:
    held = start(f("a", 2))
    assert values(apply(held, ChangeSet(full=False, flags={"a": f("a", 2, "x")}), 1)) == {"a": 2}
    assert apply(held, ChangeSet(full=False, flags={"a": f("a", 2, "x")}), 1).data.flags[
        "a"
    ].variations == ("a2",)
    deleted = apply(held, ChangeSet(full=False, flags={"a": tombstone_flag("a", 2)}), 1)
    assert values(deleted) == {"a": 2}
    deleted = apply(held, ChangeSet(full=False, flags={"a": tombstone_flag("a", 3)}), 1)
    assert values(deleted) == {}
    revived = apply(deleted, ChangeSet(full=False, flags={"a": f("a", 3)}), 2)
    assert values(revived) == {}


def test_an_authoritative_put_replaces_everything_even_with_lower_versions() -> None:
    held = start(f("a", 9), f("b", 1))
    put = ChangeSet(full=True, flags={"a": f("a", 1)}, authoritative=True, requested_at=0)
    assert values(apply(held, put, 1)) == {"a": 1}


def test_fdv2_result_for_an_older_basis_applies_only_with_a_newer_selector() -> None:
    s5, s6, s7 = Selector("s5", 5), Selector("s6", 6), Selector("s7", 7)
    held = start(f("a", 1), selector=s6)
    late_full = ChangeSet(full=True, flags={"a": f("a", 0)}, selector=s5, basis=None)
    assert merge(held, late_full, 1) is None
    same = ChangeSet(full=True, flags={"z": f("z", 1)}, selector=s6, basis=Selector("s4", 4))
    assert merge(held, same, 1) is None
    newer = ChangeSet(full=False, flags={"b": f("b", 1)}, selector=s7, basis=s5)
    result = apply(held, newer, 1)
    assert values(result) == {"a": 1, "b": 1}
    assert result.selector == s7


def test_fdv2_result_for_the_basis_held_is_applied_as_the_service_says() -> None:
    s6, s7 = Selector("s6", 6), Selector("s7", 7)
    held = start(f("a", 5), f("b", 1), selector=s6)
    # the service is authoritative here: even a lower item version is taken
    changes = ChangeSet(full=False, flags={"a": f("a", 4)}, selector=s7, basis=s6)
    assert values(apply(held, changes, 1)) == {"a": 4, "b": 1}
    full = ChangeSet(full=True, flags={"c": f("c", 1)}, selector=Selector("reset", 1), basis=s6)
    result = apply(held, full, 1)
    assert values(result) == {"c": 1}
    assert result.selector == Selector("reset", 1)


def test_up_to_date_answers_and_identical_data_change_nothing() -> None:
    held = start(f("a", 1), selector=Selector("s", 1))
    current = ChangeSet(full=False, current=True, basis=Selector("s", 1))
    result = merge(held, current, 1)
    assert result is not None
    assert result.holding is held
    assert not result.changed
    same = ChangeSet(full=True, flags={"a": f("a", 1)}, requested_at=5)
    again = merge(start(f("a", 1)), same, 6)
    assert again is not None
    assert not again.changed


def test_a_poll_replaces_initializer_data_whatever_its_version() -> None:
    cached = Holding(
        data=start(f("a", 9, "cached"), f("b", 1, "cached")).data,
        learned_at={("flag", "a"): float("-inf"), ("flag", "b"): float("-inf")},
    )
    poll = ChangeSet(full=True, flags={"a": f("a", 2, "served"), "b": f("b", 1, "served")})
    result = apply(cached, poll, 1)
    assert {k: v.variations for k, v in result.data.flags.items()} == {
        "a": ("served",),
        "b": ("served",),
    }


def test_a_poll_keeps_our_copy_at_an_equal_or_higher_version() -> None:
    held = start(f("a", 1, "ours"), f("b", 4, "ours"), at=0)
    poll = ChangeSet(
        full=True, flags={"a": f("a", 1, "same"), "b": f("b", 3, "lagging")}, requested_at=5
    )
    result = merge(held, poll, 6)
    assert result is not None
    assert not result.changed
    assert {k: v.variations for k, v in result.holding.data.flags.items()} == {
        "a": ("ours",),
        "b": ("ours",),
    }
