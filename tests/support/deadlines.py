"""Waiting in tests: poll a condition until it holds, failing after a deadline with what was
awaited (and, when asked, the state that did not get there). Never a bare sleep to synchronise."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Deadline:
    """`seconds` from when it is made, on the monotonic clock."""

    seconds: float
    ends: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ends", time.monotonic() + self.seconds)

    def left(self) -> float:
        """Seconds until it passes (0 once it has)."""
        return max(0.0, self.ends - time.monotonic())

    def passed(self) -> bool:
        return time.monotonic() > self.ends

    def missed(self, what: object, state: Callable[[], object] | None = None) -> AssertionError:
        """The failure of a wait for `what` that this deadline ended."""
        found = "" if state is None else f": {state()}"
        return AssertionError(f"timed out after {self.seconds}s waiting for {what}{found}")


def wait_until(
    predicate: Callable[[], T],
    *,
    timeout: float = 10.0,
    what: str = "",
    interval: float = 0.01,
    state: Callable[[], object] | None = None,
) -> T:
    """Poll `predicate` every `interval` seconds until it returns something true, and return that;
    after `timeout` seconds fail with an AssertionError naming `what` (or the predicate) and
    `state()`. Exceptions of the predicate propagate."""
    deadline = Deadline(timeout)
    while not (result := predicate()):
        if deadline.passed():
            raise deadline.missed(what or predicate, state)
        time.sleep(interval)
    return result


async def eventually(
    predicate: Callable[[], object],
    *,
    within: float = 5.0,
    what: str = "",
    interval: float = 0.005,
    state: Callable[[], object] | None = None,
) -> Any:
    """`wait_until` for a test's event loop: poll `predicate` (a coroutine function's result is
    awaited) every `interval` seconds, yielding to the loop between polls, until it returns
    something true, and return that; fail naming `what` after `within` seconds."""
    deadline = Deadline(within)
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        if deadline.passed():
            raise deadline.missed(what or predicate, state)
        await asyncio.sleep(interval)


async def take(items: AsyncIterator[T], count: int, *, within: float = 10.0) -> list[T]:
    """The next `count` items of `items` (a change feed's subscription, say); fail naming how
    many arrived when they do not all arrive within `within` seconds."""
    got: list[T] = []
    try:
        async with asyncio.timeout(within):
            while len(got) < count:
                got.append(await anext(items))
    except TimeoutError:
        raise AssertionError(
            f"timed out after {within}s with {len(got)} of {count} items"
        ) from None
    return got
