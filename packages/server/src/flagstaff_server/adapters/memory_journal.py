"""The in-memory store's transactions: the undo journal a unit of work writes through (replayed
backwards on rollback), and the copies a repository stores and hands out (times cut to the
millisecond, as the SQL store keeps them)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from dataclasses import fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.adapters.millis import truncate
from flagstaff_server.errors import NotFound, VersionConflict
from flagstaff_server.services.ports import (
    EnvironmentRecord,
    EpochRecord,
    FlagRecord,
    SegmentRecord,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def stored(record: R) -> R:
    """A private copy with times cut to the millisecond, as the SQL store keeps them."""
    clone = copy.deepcopy(record)
    times = {
        f.name: truncate(value)
        for f in fields(clone)
        if isinstance(value := getattr(clone, f.name), datetime)
    }
    return replace(clone, **times) if times else clone


def stored_environment(record: EnvironmentRecord) -> EnvironmentRecord:
    copied = stored(record)
    return replace(copied, retired=tuple(stored(r) for r in copied.retired))


class UndoJournal:
    """Undo steps of the open transaction, replayed backwards on rollback."""

    def __init__(self, *, read_only: bool) -> None:
        self._undo: list[Callable[[], None]] = []
        self._read_only = read_only

    def check_writable(self) -> None:
        if self._read_only:
            raise RuntimeError("write in a read-only unit of work")

    def put(self, table: dict[K, V], key: K, value: V) -> None:
        self.check_writable()
        if key in table:
            old = table[key]
            self._undo.append(lambda: table.__setitem__(key, old))
        else:
            self._undo.append(lambda: table.__delitem__(key))
        table[key] = value

    def remove(self, table: dict[K, V], key: K) -> None:
        self.check_writable()
        old = table.pop(key)
        self._undo.append(lambda: table.__setitem__(key, old))

    def append(self, log: list[V], entry: V) -> None:
        self.check_writable()
        log.append(entry)
        self._undo.append(lambda: log.__delitem__(-1))

    def set_seq(self, state: MemoryState, seq: int) -> None:
        self.check_writable()
        old = state.seq
        self._undo.append(lambda: setattr(state, "seq", old))
        state.seq = seq

    def set_epoch(self, log: list[EpochRecord], index: int, record: EpochRecord) -> None:
        self.check_writable()
        old = log[index]
        self._undo.append(lambda: log.__setitem__(index, old))
        log[index] = record

    def rollback(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


def check_version(
    current: FlagRecord | SegmentRecord | None, what: str, expected: int | None
) -> None:
    if current is None:
        raise NotFound(f"{what} not found")
    if expected is not None and current.version != expected:
        raise VersionConflict(
            f"{what} is at version {current.version}, not {expected}", path="/_version"
        )
