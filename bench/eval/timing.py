"""The timed loop: a bounded number of evaluations per repeat, cycling through a case's contexts,
with the garbage collector paused (as `timeit` does). Owns no evaluator and prints nothing.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Nanoseconds per evaluation of each repeat (each of `evaluations` evaluations), and their
    median and minimum."""

    samples_ns: tuple[float, ...]
    evaluations: int

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns)

    @property
    def min_ns(self) -> float:
        return min(self.samples_ns)


def time_once(
    call: Callable[[Any], object],
    contexts: Sequence[object],
    rounds: int,
    settle: Callable[[], None] | None = None,
) -> float:
    """Nanoseconds per evaluation over `rounds` passes through `contexts`, `settle()` (work the
    calls left to background threads) included."""
    passes = range(rounds)
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in passes:
            for context in contexts:
                call(context)
        if settle is not None:
            settle()
        elapsed = time.perf_counter_ns() - start
    finally:
        if enabled:
            gc.enable()
    return elapsed / (rounds * len(contexts))


def rounds_for(contexts: Sequence[object], evaluations: int) -> int:
    """Passes through `contexts` giving at least `evaluations` evaluations (at least one pass)."""
    return max(1, -(-evaluations // len(contexts)))
