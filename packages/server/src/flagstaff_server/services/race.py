"""Retrying a write that lost a compare-and-set race to a concurrent writer. Use cases read what
they edit `for_update`, so writers of one row queue instead of racing; this is the safety net.

A use case re-reads and re-applies its edit from scratch, so version tests the caller asked for are
checked again against the winner's state (and fail there with a plain `VersionConflict`). Runs in
a worker thread, never on the event loop: the short back-off sleeps.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from flagstaff_server.errors import LostRace

T = TypeVar("T")

# Each round of a race has one winner, so a burst of N writers to one flag needs up to N rounds;
# the jittered back-off spreads the losers so most succeed on the next attempt.
ATTEMPTS = 25
BACKOFF_SECONDS = 0.002


def retry_lost_races(attempt: Callable[[], T]) -> T:
    """Run `attempt` until it does not raise `LostRace`, at most `ATTEMPTS` times."""
    for round_number in range(1, ATTEMPTS):
        try:
            return attempt()
        except LostRace:
            time.sleep(random.uniform(0, BACKOFF_SECONDS * round_number))
    return attempt()
