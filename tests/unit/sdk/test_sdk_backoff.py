"""Reconnect delays: doubling to the cap, jitter bounds, reset after a healthy spell, the
extended regime after unexpected statuses, Retry-After and the server's retry hint."""

from __future__ import annotations

import pytest
from flagstaff_sdk.backoff import Backoff
from flagstaff_sdk.clock import ManualClock
from flagstaff_sdk.config import Timing

TIMING = Timing()


def backoff(random: float = 0.0, clock: ManualClock | None = None) -> Backoff:
    return Backoff(TIMING, clock or ManualClock(), lambda: random)


def test_delays_double_from_one_second_to_the_thirty_second_cap() -> None:
    policy = backoff()
    assert [policy.delay() for _ in range(8)] == [1, 2, 4, 8, 16, 30, 30, 30]


@pytest.mark.parametrize("random", [0.0, 0.25, 0.999])
def test_jitter_takes_off_at_most_half(random: float) -> None:
    policy = backoff(random)
    for expected in [1, 2, 4, 8, 16, 30]:
        delay = policy.delay()
        assert expected / 2 <= delay <= expected
        assert delay == pytest.approx(expected * (1 - random * 0.5))


def test_sixty_healthy_seconds_start_the_schedule_over() -> None:
    clock = ManualClock()
    policy = backoff(clock=clock)
    for _ in range(4):
        policy.delay()
    policy.healthy()
    clock.advance(59)
    assert policy.delay() == 16  # healthy too briefly: keeps growing
    policy.healthy()
    clock.advance(60)
    assert policy.delay() == 1


def test_unexpected_status_switches_to_minutes_then_success_returns_to_normal() -> None:
    policy = backoff()
    policy.delay()
    assert [policy.delay(unexpected=True) for _ in range(5)] == [300, 600, 1200, 2400, 3600]
    assert policy.extended
    policy.healthy()
    assert not policy.extended
    assert policy.delay() == 30  # normal regime again (the count resets only after 60 s)


def test_retry_after_is_a_floor_and_the_retry_hint_sets_the_base() -> None:
    policy = backoff()
    assert policy.delay(retry_after=7) == 7
    assert policy.delay(retry_after=0.5) == 2
    hinted = backoff()
    hinted.set_base(0.25)
    assert [hinted.delay() for _ in range(3)] == [0.25, 0.5, 1.0]
    capped = backoff()
    capped.set_base(999)
    assert capped.delay() == 30
