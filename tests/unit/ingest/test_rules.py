"""Flag status rules and the fleet view's data-source state, data age and staleness."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.ingest.flag_status import DAY_MS, Activity, flag_status
from flagstaff_server.ingest.fleet import instance_view

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


def test_a_silent_instance_counts_as_stale_and_polling_has_unknown_age() -> None:
    silent = instance_view(row(last_ms=NOW - 2 * 3_600_000), now_ms=NOW)
    assert silent["silent"] is True
    assert silent["staleFlagData"] is True
    polling = instance_view(row(streaming=False, stream_ok=None), now_ms=NOW)
    assert (polling["dataSourceState"], polling["dataAgeMs"]) == ("polling", None)
