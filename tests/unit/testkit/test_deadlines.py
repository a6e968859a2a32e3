"""The kit's waits: they return what the condition found, and a missed deadline fails naming what
was awaited and the state that did not get there."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest
from support.deadlines import Deadline, eventually, take, wait_until


def test_wait_until_returns_the_first_true_result() -> None:
    polls = itertools.count()
    assert wait_until(lambda: max(0, next(polls) - 2), interval=0) == 1


def test_wait_until_fails_naming_what_and_the_state_it_found() -> None:
    with pytest.raises(AssertionError, match=r"after 0.05s waiting for the flag: version 3"):
        wait_until(lambda: False, timeout=0.05, what="the flag", state=lambda: "version 3")


async def test_eventually_awaits_a_coroutine_probe_and_returns_its_result() -> None:
    polls = itertools.count()

    async def probe() -> list[int]:
        return [1] if next(polls) == 3 else []

    assert await eventually(probe, interval=0) == [1]


async def test_eventually_fails_naming_what_it_awaited() -> None:
    with pytest.raises(AssertionError, match=r"after 0.05s waiting for the node to be current$"):
        await eventually(lambda: False, within=0.05, what="the node to be current")


def test_a_deadline_has_nothing_left_once_passed() -> None:
    deadline = Deadline(0.0)
    wait_until(deadline.passed, timeout=1)
    assert deadline.left() == 0.0


async def test_take_returns_the_next_items_and_fails_counting_what_arrived() -> None:
    async def three() -> AsyncIterator[int]:
        for item in (1, 2, 3):
            yield item
        await asyncio.Event().wait()  # then silent, as a subscription between changes

    items = three()
    assert await take(items, 2) == [1, 2]
    with pytest.raises(AssertionError, match=r"after 0.05s with 1 of 2 items"):
        await take(items, 2, within=0.05)
