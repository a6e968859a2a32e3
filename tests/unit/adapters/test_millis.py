"""Store timestamps: UTC epoch milliseconds, truncated, never rounded up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from flagstaff_server.adapters.millis import from_millis, to_millis, truncate
from hypothesis import given
from hypothesis import strategies as st


def test_known_instant() -> None:
    assert to_millis(datetime(2001, 9, 9, 1, 46, 40, 999999, tzinfo=UTC)) == 1_000_000_000_999
    assert from_millis(1_000_000_000_999) == datetime(2001, 9, 9, 1, 46, 40, 999000, tzinfo=UTC)


def test_naive_is_utc_and_offsets_are_honoured() -> None:
    naive = datetime(2026, 1, 1, 12, 0)
    plus_two = datetime(2026, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert to_millis(naive) == to_millis(plus_two)


@given(st.datetimes(timezones=st.just(UTC)))
def test_truncation_drops_only_sub_millisecond_parts(moment: datetime) -> None:
    stored = truncate(moment)
    assert timedelta(0) <= moment - stored < timedelta(milliseconds=1)
    assert truncate(stored) == stored
