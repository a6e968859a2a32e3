"""Admission control with an injected clock, and the stream channels' bounded fan-out."""

from __future__ import annotations

import asyncio

from flagstaff_server.delivery.admission import Admission, Limits, TokenBucket
from flagstaff_server.delivery.fanout import Broadcaster, Channel


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_allows_the_burst_then_the_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=2.0, burst=3, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    clock.now += 0.5
    assert bucket.take() is True
    assert bucket.take() is False
    clock.now += 100
    assert sum(bucket.take() for _ in range(10)) == 3


def test_full_sends_beyond_the_rate_are_shed_and_counted() -> None:
    clock = FakeClock()
    admission = Admission(
        Limits(full_sends_per_second=1, full_send_burst=2), clock=clock, random=lambda: 0.0
    )
    assert [admission.admit_full_send() for _ in range(3)] == [True, True, False]
    assert admission.counts["full_send"] == 2
    assert admission.counts["full_send_shed"] == 1


def test_streams_beyond_the_cap_are_shed_and_counted() -> None:
    admission = Admission(Limits(max_streams=2), clock=FakeClock(), random=lambda: 0.0)
    admission.open_streams = 2
    assert admission.admit_stream() is False
    admission.open_streams = 1
    assert admission.admit_stream() is True
    assert admission.counts["stream_shed"] == 1


def test_retry_after_is_jittered_between_base_and_twice_base() -> None:
    values = iter([0.0, 0.5, 0.999])
    admission = Admission(
        Limits(retry_after_seconds=10), clock=FakeClock(), random=lambda: next(values)
    )
    assert [admission.retry_after() for _ in range(3)] == [10, 15, 20]


def test_stream_deadline_is_jittered_below_the_maximum_age() -> None:
    clock = FakeClock()
    limits = Limits(max_connection_age_seconds=1000, age_jitter=0.25)
    low = Admission(limits, clock=clock, random=lambda: 1.0).stream_deadline()
    high = Admission(limits, clock=clock, random=lambda: 0.0).stream_deadline()
    assert (low, high) == (clock.now + 750, clock.now + 1000)
    off = Admission(Limits(max_connection_age_seconds=0), clock=clock, random=lambda: 0.5)
    assert off.stream_deadline() == float("inf")


async def test_channel_joins_queued_events_and_ends_after_close() -> None:
    channel = Channel("v1", limit=4, deadline=0, now=0)
    assert channel.offer(b"a")
    assert channel.offer(b"b")
    assert await channel.next() == b"ab"
    channel.close("bye", b"final")
    assert await channel.next() == b"final"
    assert await channel.next() is None


async def test_a_waiting_channel_wakes_on_offer() -> None:
    channel = Channel("v1", limit=4, deadline=0, now=0)
    waiting = asyncio.create_task(channel.next())
    await asyncio.sleep(0)
    channel.offer(b"x")
    assert await asyncio.wait_for(waiting, 1) == b"x"


async def test_broadcast_evicts_only_the_stream_that_stopped_reading() -> None:
    broadcaster = Broadcaster()
    slow = Channel("v1", limit=2, deadline=0, now=0)
    fast = Channel("v2", limit=2, deadline=0, now=0)
    broadcaster.channels.update({slow, fast})
    evicted = 0
    for _ in range(3):
        evicted += broadcaster.publish(b"v1", b"v2")
        assert await fast.next() == b"v2"
    assert evicted == 1
    assert slow.evicted
    assert await slow.next() is None
    assert not fast.evicted
