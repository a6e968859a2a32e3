"""Stopping background work: a cancelled call in a thread is finished before the stop returns."""

from __future__ import annotations

import asyncio
import threading

import pytest
from flagstaff_server.tasks import finish_in_thread
from support.deadlines import eventually


async def test_a_cancelled_call_ends_only_after_its_thread_has_finished() -> None:
    started = threading.Event()
    gate = threading.Event()
    finished = threading.Event()

    def commit() -> str:
        started.set()
        gate.wait(timeout=30)
        finished.set()
        return "committed"

    task = asyncio.create_task(finish_in_thread(commit))
    await eventually(started.is_set, within=10, what="the call running in its thread")
    task.cancel()
    for _ in range(20):
        await asyncio.sleep(0)
    assert not task.done(), "the cancellation propagated while the thread still held its work"

    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set()


async def test_an_uncancelled_call_returns_the_threads_result() -> None:
    assert await finish_in_thread(lambda a, b: a + b, 2, 3) == 5
