"""The game-day timeline: staleness of what a client holds, propagation of each change, and
catching up after a fault, on hand-made times."""

from __future__ import annotations

from flagstaff_server.gameday.timeline import (
    Holding,
    Timeline,
    caught_up_at,
    fleet_caught_up,
    last_caught_up,
    percentile,
    propagation_delays,
    staleness_at,
)


def timeline() -> Timeline:
    line = Timeline()
    for t, value in ((0.0, "v0"), (10.0, "v1"), (20.0, "killed"), (30.0, "v1")):
        line.record(t, value)
    return line


def test_staleness_counts_from_when_the_held_value_stopped_being_expected() -> None:
    line = timeline()
    assert line.staleness("v1", 35.0) == 0.0
    assert line.staleness("killed", 35.0) == 5.0  # the kill was cleared at 30
    assert line.staleness("v0", 35.0) == 25.0  # v0 stopped being served at 10
    assert line.staleness(None, 35.0) is None  # no data: a default, not a stale value


def test_propagation_is_the_delay_to_each_change_held() -> None:
    holding = Holding()
    for t, value in ((0.5, "v0"), (11.0, "v1"), (23.0, "killed"), (31.5, "v1")):
        holding.hold(t, value)
    assert propagation_delays(timeline(), holding) == [0.5, 1.0, 3.0, 1.5]


def test_a_change_skipped_over_is_not_counted_as_propagated() -> None:
    holding = Holding()
    holding.hold(0.1, "v0")
    holding.hold(31.0, "v1")  # it missed the kill altogether
    # v1 (at 10) and the kill (at 20) never reached it; v1 again (at 30) did, after 1 s
    assert propagation_delays(timeline(), holding) == [0.1, 1.0]


def test_catching_up_accepts_the_value_at_the_fault_end_or_a_newer_one() -> None:
    line = timeline()
    line.record(40.0, "v2")
    late = Holding()
    late.hold(0.0, "v0")
    late.hold(41.0, "v2")
    assert caught_up_at(line, late, 30.0) == 41.0
    already = Holding()
    already.hold(29.0, "v1")
    assert caught_up_at(line, already, 30.0) == 30.0
    never = Holding()
    never.hold(0.0, "killed")
    assert caught_up_at(line, never, 30.0) is None


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([], 0.99) == 0.0


def test_propagation_since_leaves_out_changes_asked_before_every_client_was_current() -> None:
    holding = Holding()
    # it connected 5 s after the seed value was asked for: connecting, not propagation
    for t, value in ((5.0, "v0"), (11.0, "v1"), (23.0, "killed"), (31.5, "v1")):
        holding.hold(t, value)
    assert propagation_delays(timeline(), holding) == [5.0, 1.0, 3.0, 1.5]
    assert propagation_delays(timeline(), holding, since=6.0) == [1.0, 3.0, 1.5]


def test_the_fleet_caught_up_when_its_last_client_did() -> None:
    line = timeline()
    early, late, never = Holding(), Holding(), Holding()
    early.hold(11.0, "v1")
    late.hold(0.0, "v0")
    late.hold(13.5, "v1")
    never.hold(0.0, "v0")
    assert fleet_caught_up(line, [early, late], 10.0) == 3.5
    assert fleet_caught_up(line, [early, late, never], 10.0) is None
    assert fleet_caught_up(line, [], 10.0) == 0.0


def test_the_client_caught_up_last_is_named_or_the_first_that_never_did() -> None:
    line = timeline()
    early, late, never = Holding(), Holding(), Holding()
    early.hold(11.0, "v1")
    late.hold(0.0, "v0")
    late.hold(13.5, "v1")
    never.hold(0.0, "v0")
    assert last_caught_up(line, [("early", early), ("late", late)], 10.0) == ("late", 3.5)
    assert last_caught_up(line, [("late", late), ("early", early)], 10.0) == ("late", 3.5)
    named = [("early", early), ("never", never), ("late", late)]
    assert last_caught_up(line, named, 10.0) == ("never", None)
    assert last_caught_up(line, [], 10.0) is None


def test_staleness_at_a_past_instant_uses_the_changes_made_by_then() -> None:
    line = timeline()
    holding = Holding()
    holding.hold(0.5, "v0")
    holding.hold(12.0, "v1")
    assert staleness_at(line, holding, 0.2) is None  # nothing held yet
    assert staleness_at(line, holding, 5.0) == 0.0
    assert staleness_at(line, holding, 11.0) == 1.0  # v0 stopped being expected at 10
    assert staleness_at(line, holding, 15.0) == 0.0
    assert staleness_at(line, holding, 25.0) == 5.0  # the kill at 20 never reached it
