"""The sign-in throttle: failures per account and per client address in a sliding window,
refusal with the seconds to wait, reset on success, and bounded memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flagstaff_server.errors import TooManyAttempts
from flagstaff_server.services.sign_in_throttle import SignInThrottle, ThrottleLimit

START = datetime(2026, 1, 1, tzinfo=UTC)
WINDOW = timedelta(minutes=15)


def throttle(*, account: int = 3, client: int = 5, max_keys: int = 100) -> SignInThrottle:
    return SignInThrottle(
        account=ThrottleLimit(failures=account, window=WINDOW),
        client=ThrottleLimit(failures=client, window=WINDOW),
        max_keys=max_keys,
    )


def fail(limiter: SignInThrottle, email: str | None, client: str | None, at: datetime) -> None:
    limiter.check(email=email, client=client, now=at)
    limiter.record_failure(email=email, client=client, now=at)


def test_account_is_refused_after_its_failures_until_the_oldest_leaves_the_window() -> None:
    limiter = throttle()
    for minute in range(3):
        fail(limiter, "ada@example.com", "10.0.0.1", START + timedelta(minutes=minute))
    with pytest.raises(TooManyAttempts) as refused:
        limiter.check(email="ADA@example.com ", client="10.0.0.9", now=START + timedelta(minutes=5))
    assert refused.value.retry_after == 10 * 60  # the first failure leaves at minute 15
    limiter.check(email="ada@example.com", client="10.0.0.9", now=START + WINDOW)


def test_other_accounts_are_not_refused_for_one_account_s_failures() -> None:
    limiter = throttle()
    for _ in range(3):
        fail(limiter, "ada@example.com", "10.0.0.1", START)
    limiter.check(email="bob@example.com", client="10.0.0.2", now=START)


def test_one_address_is_refused_after_failures_across_many_accounts() -> None:
    limiter = throttle()
    for index in range(5):
        fail(limiter, f"user{index}@example.com", "10.0.0.1", START)
    with pytest.raises(TooManyAttempts):
        limiter.check(email="fresh@example.com", client="10.0.0.1", now=START)
    limiter.check(email="fresh@example.com", client="10.0.0.2", now=START)


def test_success_clears_the_account_but_not_the_address() -> None:
    limiter = throttle(account=3, client=4)
    for _ in range(2):
        fail(limiter, "ada@example.com", "10.0.0.1", START)
    limiter.record_success(email="ada@example.com")
    for _ in range(2):
        fail(limiter, "ada@example.com", "10.0.0.1", START)
    limiter.check(email="ada@example.com", client="10.0.0.2", now=START)
    with pytest.raises(TooManyAttempts):
        limiter.check(email="other@example.com", client="10.0.0.1", now=START)


def test_retry_after_is_at_least_one_second() -> None:
    limiter = throttle(account=1)
    fail(limiter, "ada@example.com", None, START)
    with pytest.raises(TooManyAttempts) as refused:
        limiter.check(
            email="ada@example.com", client=None, now=START + WINDOW - timedelta(milliseconds=1)
        )
    assert refused.value.retry_after == 1


def test_memory_is_bounded_by_keys_and_by_failures_per_key() -> None:
    limiter = throttle(account=3, client=1000, max_keys=50)
    for index in range(500):
        fail(limiter, f"user{index}@example.com", None, START)
    assert limiter.tracked_keys() == 50
    for _ in range(100):
        limiter.record_failure(email="ada@example.com", client=None, now=START)
    assert all(len(times) <= 3 for times in limiter._failures.values())


def test_expired_counts_are_dropped_when_read() -> None:
    limiter = throttle()
    fail(limiter, "ada@example.com", None, START)
    limiter.check(email="ada@example.com", client=None, now=START + WINDOW)
    assert limiter.tracked_keys() == 0
