"""The one mutable reference to the data a client evaluates with. Writers (sources, from any
thread) merge under a lock; readers take `data` without locking (it is immutable and swapped).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from flagstaff_core import FlagData

from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.clock import Clock
from flagstaff_sdk.merge import Holding, merge
from flagstaff_sdk.notifier import Notifier


class Store:
    def __init__(self, clock: Clock, notifier: Notifier) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._notifier = notifier
        self._watchers: list[Callable[[], None]] = []
        self.holding = Holding()
        self.data: FlagData | None = None
        """None until some source (network, cache, file, test data) delivered data."""
        self.confirmed_at: float | None = None
        """Monotonic time the held data was last known current."""
        self.revision = 0
        """Bumped on every change (the cache writer compares it)."""

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the writer's thread) after every change."""
        self._watchers.append(callback)

    def apply(self, change: ChangeSet) -> bool:
        """Merge `change`; False when the merge rule found it stale."""
        with self._lock:
            now = self._clock.monotonic()
            result = merge(self.holding, change, now)
            if result is None:
                return False
            old = self.holding
            self.holding = result.holding
            if result.holding is not old or self.data is None:
                self.data = result.holding.data
                self.revision += 1
            self.confirmed_at = now
        if result.changed:
            self._notifier.data_changed(
                old.data, result.holding.data, result.changed_flags, result.changed_segments
            )
        if result.holding is not old:
            for callback in self._watchers:
                callback()
        return True

    def load(self, holding: Holding, confirmed_at: float) -> None:
        """Start from data read back from the disk cache (no notifications: nothing changed)."""
        with self._lock:
            if self.data is not None:
                return
            self.holding = holding
            self.data = holding.data
            self.confirmed_at = confirmed_at

    def confirm(self) -> None:
        """The service said the held data is current (e.g. a 304)."""
        with self._lock:
            self.confirmed_at = self._clock.monotonic()
