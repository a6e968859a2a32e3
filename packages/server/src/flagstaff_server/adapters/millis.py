"""Timestamps as UTC epoch milliseconds, the precision every store keeps (and LaunchDarkly uses).
Naive datetimes are taken to be UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_millis(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # integer arithmetic: a float timestamp can round a millisecond up
    delta = moment - EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_millis(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def truncate(moment: datetime) -> datetime:
    """The moment as a store gives it back."""
    return from_millis(to_millis(moment))
