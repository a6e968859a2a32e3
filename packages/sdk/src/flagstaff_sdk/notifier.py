"""Listeners: flag changes (by key, and by value for one context) and data-source status, called
on one notifier thread so a slow listener never holds up the network actor or an evaluation.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flagstaff_core import Context, FlagData, evaluate_key

from flagstaff_sdk.dependency import affected_flags
from flagstaff_sdk.status import DataSourceStatus

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FlagChange:
    """A flag whose configuration (or a prerequisite or segment it uses) changed."""

    key: str


@dataclass(frozen=True, slots=True)
class FlagValueChange:
    key: str
    old_value: Any
    new_value: Any


FlagChangeListener = Callable[[FlagChange], None]
FlagValueListener = Callable[[FlagValueChange], None]
StatusListener = Callable[[DataSourceStatus], None]


@dataclass(frozen=True, slots=True)
class _ValueWatch:
    key: str
    context: Context
    listener: FlagValueListener
    default: Any


@dataclass(frozen=True, slots=True)
class _DataChanged:
    old: FlagData
    new: FlagData
    flags: frozenset[str]
    segments: frozenset[str]


_STOP = object()


class Notifier:
    """Registers listeners and calls them in order from its own thread (started on demand)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flag_listeners: list[FlagChangeListener] = []
        self._value_watches: list[_ValueWatch] = []
        self._status_listeners: list[StatusListener] = []
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._run, name="flagstaff-notifier", daemon=True
            )
            self._thread.start()

    def add_flag_listener(self, listener: FlagChangeListener) -> None:
        with self._lock:
            self._flag_listeners.append(listener)
            self._start()

    def add_value_listener(
        self, key: str, context: Context, listener: FlagValueListener, default: Any = None
    ) -> None:
        with self._lock:
            self._value_watches.append(_ValueWatch(key, context, listener, default))
            self._start()

    def add_status_listener(self, listener: StatusListener) -> None:
        with self._lock:
            self._status_listeners.append(listener)
            self._start()

    def remove_listener(self, listener: Callable[..., None]) -> None:
        with self._lock:
            self._flag_listeners = [item for item in self._flag_listeners if item != listener]
            self._status_listeners = [item for item in self._status_listeners if item != listener]
            self._value_watches = [w for w in self._value_watches if w.listener != listener]

    @property
    def wants_changes(self) -> bool:
        return bool(self._flag_listeners or self._value_watches)

    def data_changed(
        self, old: FlagData, new: FlagData, flags: frozenset[str], segments: frozenset[str]
    ) -> None:
        if self.wants_changes:
            self._queue.put(_DataChanged(old, new, flags, segments))

    def status_changed(self, status: DataSourceStatus) -> None:
        if self._status_listeners:
            self._queue.put(status)

    def close(self, timeout: float = 1.0) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(_STOP)
            thread.join(timeout)

    def _run(self) -> None:
        while (item := self._queue.get()) is not _STOP:
            try:
                if isinstance(item, DataSourceStatus):
                    for status_listener in list(self._status_listeners):
                        status_listener(item)
                elif isinstance(item, _DataChanged):
                    self._deliver(item)
            except Exception:
                # a listener's bug must not stop later notifications
                log.exception("a Flagstaff listener raised")

    def _deliver(self, change: _DataChanged) -> None:
        keys = affected_flags((change.old, change.new), change.flags, change.segments)
        for key in sorted(keys):
            for flag_listener in list(self._flag_listeners):
                flag_listener(FlagChange(key))
        for watch in list(self._value_watches):
            if watch.key not in keys:
                continue
            old = evaluate_key(change.old, watch.key, watch.context).detail.value
            new = evaluate_key(change.new, watch.key, watch.context).detail.value
            old = watch.default if old is None else old
            new = watch.default if new is None else new
            if old != new or type(old) is not type(new):
                watch.listener(FlagValueChange(watch.key, old, new))
