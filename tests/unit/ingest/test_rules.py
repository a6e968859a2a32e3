"""Flag status rules and the fleet view's data-source state, data age and staleness."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.ingest.flag_status import DAY_MS, Activity, flag_status
from flagstaff_server.ingest.fleet import StreamState, fold_inits, instance_view

NOW = 1_800_000_000_000


def activity(first_days: float, last_days: float, recent: set[int], long: set[int]) -> Activity:
    return Activity(
        first_ms=int(NOW - first_days * DAY_MS),
        last_ms=int(NOW - last_days * DAY_MS),
        recent_variations=frozenset(recent),
        long_variations=frozenset(long),
    )


@pytest.mark.parametrize(
    ("created_days", "found", "expected"),
    [
        (1, None, "new"),
        (9, None, "inactive"),
        (None, None, "inactive"),
        (40, activity(35, 8, set(), {0}), "inactive"),
        (40, activity(35, 0.1, {0, 1}, {0, 1}), "active"),
        (40, activity(5, 0.1, {1}, {1}), "launched"),
        (40, activity(35, 0.1, {1}, {0, 1}), "launched"),
        (40, activity(35, 0.1, {1}, {1}), "stale"),
    ],
)
def test_flag_status_rules(
    created_days: float | None, found: Activity | None, expected: str
) -> None:
    created = None if created_days is None else int(NOW - created_days * DAY_MS)
    assert flag_status(created_ms=created, activity=found, now_ms=NOW) == expected


def row(**values: Any) -> dict[str, Any]:
    base = {
        "instance_id": "i1",
        "sdk_name": "python-server-sdk",
        "sdk_version": "9.18.4",
        "first_ms": NOW - 3_600_000,
        "last_ms": NOW - 60_000,
        "dropped_events": 0,
        "streaming": True,
        "stream_ok": True,
        "stream_ok_ms": NOW - 3_600_000,
    }
    return {**base, **values}


def test_a_connected_stream_is_current() -> None:
    view = instance_view(row(), now_ms=NOW)
    assert (view["dataSourceState"], view["dataAgeMs"], view["staleFlagData"]) == (
        "valid",
        0,
        False,
    )


def test_an_interrupted_stream_ages_its_data_until_it_is_stale() -> None:
    fresh = instance_view(row(stream_ok=False, stream_ok_ms=NOW - 60_000), now_ms=NOW)
    assert (fresh["dataSourceState"], fresh["dataAgeMs"], fresh["staleFlagData"]) == (
        "interrupted",
        60_000,
        False,
    )
    old = instance_view(row(stream_ok=False, stream_ok_ms=NOW - 600_000), now_ms=NOW)
    assert old["staleFlagData"] is True


def test_the_age_of_a_lost_stream_counts_from_its_first_failed_reconnect() -> None:
    # connected an hour ago, lost a minute ago: the data is a minute old, not an hour
    lost = instance_view(
        row(stream_ok=False, stream_ok_ms=NOW - 3_600_000, stream_failed_ms=NOW - 60_000),
        now_ms=NOW,
    )
    assert (lost["dataSourceState"], lost["dataAgeMs"], lost["staleFlagData"]) == (
        "interrupted",
        60_000,
        False,
    )


def test_an_instance_silent_for_two_of_its_intervals_has_stopped_and_is_not_stale() -> None:
    every = 60_000
    late = instance_view(row(diagnostic_interval_ms=every, last_ms=NOW - 2 * every), now_ms=NOW)
    assert (late["dataSourceState"], late["stopped"], late["nextReportBy"]) == (
        "valid",
        False,
        NOW - every,
    )
    gone = instance_view(
        row(diagnostic_interval_ms=every, last_ms=NOW - 2 * every - 1, stream_ok=False),
        now_ms=NOW,
    )
    assert (gone["dataSourceState"], gone["stopped"], gone["stoppedReason"]) == (
        "stopped",
        True,
        "silent",
    )
    assert (gone["dataAgeMs"], gone["staleFlagData"], gone["nextReportBy"]) == (None, False, None)
    # without a reported interval, LaunchDarkly's default (15 minutes) applies
    default = instance_view(row(last_ms=NOW - 29 * 60_000), now_ms=NOW)
    assert default["stopped"] is False
    assert instance_view(row(last_ms=NOW - 31 * 60_000), now_ms=NOW)["stopped"] is True


def test_an_instance_that_said_it_was_closing_has_stopped_at_once() -> None:
    closed = instance_view(row(last_ms=NOW - 1_000, stopped_ms=NOW - 1_000), now_ms=NOW)
    assert (closed["dataSourceState"], closed["stoppedReason"]) == ("stopped", "closed")


def test_the_own_sdks_reported_state_and_age_win_and_its_age_grows_after_the_report() -> None:
    reported = row(
        reported_state="INTERRUPTED",
        reported_age_ms=30_000,
        reported_ms=NOW - 60_000,
        reported_source="stale",
    )
    view = instance_view(reported, now_ms=NOW)
    assert (view["dataSourceState"], view["dataAgeMs"], view["dataSource"]) == (
        "interrupted",
        90_000,
        "stale",
    )
    polled = instance_view(
        row(streaming=False, reported_state="VALID", reported_source="poll"), now_ms=NOW
    )
    assert (polled["dataSourceState"], polled["dataAgeMs"]) == ("valid", 0)
    starting = instance_view(row(reported_state="INITIALIZING", reported_ms=NOW), now_ms=NOW)
    assert (starting["dataSourceState"], starting["dataAgeMs"]) == ("initializing", None)


def test_polling_has_unknown_age_and_an_instance_not_reported_yet_is_unknown() -> None:
    polling = instance_view(row(streaming=False, stream_ok=None), now_ms=NOW)
    assert (polling["dataSourceState"], polling["dataAgeMs"]) == ("polling", None)
    fresh = instance_view(
        row(stream_ok=None, stream_ok_ms=None, diagnostic_interval_ms=60_000, last_ms=NOW),
        now_ms=NOW,
    )
    assert (fresh["dataSourceState"], fresh["nextReportBy"]) == ("unknown", NOW + 60_000)


def test_stream_attempts_fold_into_the_state_of_the_stream() -> None:
    up = fold_inits(StreamState(), [(10, True)])
    assert up == StreamState(init_ms=10, ok=True, ok_ms=10, failed_ms=None)
    # lost: the first failed reconnect says since when; later failures keep it
    down = fold_inits(up, [(50, False), (20, False)])
    assert down == StreamState(init_ms=50, ok=False, ok_ms=10, failed_ms=20)
    assert fold_inits(down, [(70, False)]).failed_ms == 20
    again = fold_inits(down, [(80, True)])
    assert (again.ok, again.ok_ms, again.failed_ms) == (True, 80, None)
    # an attempt older than the latest known one changes only the latest success
    late = fold_inits(again, [(75, False), (5, True)])
    assert late == again
