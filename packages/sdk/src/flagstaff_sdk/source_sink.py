"""The DataSink handed to custom and file sources: data goes into the store at once, on the
caller's thread; the status bookkeeping is moved onto the actor's loop. Callable from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from flagstaff_sdk.change_set import ChangeSet
from flagstaff_sdk.status import ErrorInfo
from flagstaff_sdk.status_board import StatusBoard


class SourceSink:
    def __init__(self, board: StatusBoard, loop: asyncio.AbstractEventLoop) -> None:
        self._board = board
        self._loop = loop

    def _on_loop(self, fn: Callable[[], None]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            fn()
        else:
            with contextlib.suppress(RuntimeError):  # the client closed meanwhile
                self._loop.call_soon_threadsafe(fn)

    def apply(self, change: ChangeSet) -> None:
        # data goes in synchronously (a test's update is visible when `update` returns)
        self._board.store.apply(change)
        self._on_loop(lambda: self._board.source_applied(ChangeSet(full=False, current=True)))

    def report_valid(self) -> None:
        self._on_loop(lambda: self._board.source_valid(True))

    def report_error(self, kind: str, message: str, *, status: int | None = None) -> None:
        info = ErrorInfo(kind=kind, message=message, status=status, at=self._board.clock.wall())
        self._on_loop(lambda: self._board.source_valid(False, info))
