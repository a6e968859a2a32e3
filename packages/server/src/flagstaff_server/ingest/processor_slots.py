"""The figures the node and its processor process share: a small file of 64-bit integers mapped
into both (`DATA_DIR/ingest/processor.state`, never fsync'd: it is rebuilt at every start). The
node writes the durable seq and the stop request; the processor writes its committed position and
counts. Each slot has one writer, and an aligned 8-byte store is never seen half done."""

from __future__ import annotations

import mmap
import os
from enum import IntEnum
from pathlib import Path


class Slot(IntEnum):
    DURABLE = 0
    """Written by the node: the journal's last fsync'd seq; the processor reads no further."""
    STOP = 1
    """Written by the node: 1 asks the processor to finish its batch and exit."""
    POSITION = 2
    """Written by the processor: the committed journal seq (-1 until read from the store)."""
    STORE_OK = 3
    """1 ok, 0 down, -1 not tried yet."""
    PAYLOADS = 4
    DUPLICATES = 5
    QUARANTINED = 6
    QUARANTINE_HELD = 7
    """-1 until first read."""
    ERRORS = 8
    BISECTIONS = 9


COUNTED = {
    Slot.PAYLOADS: "payloads",
    Slot.DUPLICATES: "duplicates",
    Slot.QUARANTINED: "quarantined",
    Slot.ERRORS: "error",
    Slot.BISECTIONS: "bisections",
}
"""Slots that mirror the processor's `counts` (per process: they start at 0 in each one)."""

SIZE = 8 * len(Slot)


class Slots:
    """The mapping of the state file; `create` (the node) makes it anew, `open` maps it."""

    def __init__(self, path: Path) -> None:
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, SIZE)
        finally:
            os.close(fd)
        self._values = memoryview(self._map).cast("q")

    @classmethod
    def create(cls, path: Path) -> Slots:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.ftruncate(fd, SIZE)
        finally:
            os.close(fd)
        slots = cls(path)
        slots.reset()
        return slots

    def reset(self) -> None:
        """Everything the processor writes back to "nothing yet" (before a process starts)."""
        for slot in Slot:
            if slot not in (Slot.DURABLE, Slot.STOP):
                self._values[slot] = 0
        self._values[Slot.POSITION] = -1
        self._values[Slot.QUARANTINE_HELD] = -1
        self._values[Slot.STORE_OK] = -1

    def __getitem__(self, slot: Slot) -> int:
        value: int = self._values[slot]
        return value

    def __setitem__(self, slot: Slot, value: int) -> None:
        self._values[slot] = value

    def close(self) -> None:
        self._values.release()
        self._map.close()
