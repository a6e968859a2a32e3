"""Batches waiting for delivery, oldest first, bounded in bytes: in memory, or one file per batch
in a directory so they survive a restart. Owned by the courier thread; must not send anything.
"""

from __future__ import annotations

import logging
import os
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

_FILE_NAME = re.compile(r"^(\d{12})\.([0-9a-f-]{36})\.(\d+)\.json$")


@dataclass(frozen=True, slots=True)
class Batch:
    """One `/bulk` payload: its id is fixed when it is made and reused on every attempt."""

    payload_id: str
    body: bytes
    """The JSON array, uncompressed."""
    events: int


class Spool(Protocol):
    def add(self, batch: Batch) -> list[Batch]:
        """Keep `batch`; returns the batches pushed out (oldest first) to stay within bounds."""

    def head(self) -> Batch | None: ...

    def remove_head(self) -> None: ...

    def __len__(self) -> int: ...

    @property
    def size(self) -> int:
        """Bytes held."""


class MemorySpool:
    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._batches: deque[Batch] = deque()
        self._size = 0

    def add(self, batch: Batch) -> list[Batch]:
        self._batches.append(batch)
        self._size += len(batch.body)
        dropped = []
        while self._size > self._max and self._batches:
            old = self._batches.popleft()
            self._size -= len(old.body)
            dropped.append(old)
        return dropped

    def head(self) -> Batch | None:
        return self._batches[0] if self._batches else None

    def remove_head(self) -> None:
        old = self._batches.popleft()
        self._size -= len(old.body)

    def __len__(self) -> int:
        return len(self._batches)

    @property
    def size(self) -> int:
        return self._size


class DiskSpool:
    """`{sequence}.{payload id}.{event count}.json` files, written atomically (temp + rename);
    files that are not ours are left alone."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self._dir = directory
        self._max = max_bytes
        self._dir.mkdir(parents=True, exist_ok=True)
        self._files: deque[tuple[Path, Batch]] = deque()
        self._size = 0
        self._next = 0
        for path in sorted(self._dir.iterdir()):
            match = _FILE_NAME.match(path.name)
            if match is None:
                continue
            try:
                body = path.read_bytes()
            except OSError:
                log.warning("cannot read spooled events %s; skipped", path)
                continue
            batch = Batch(match.group(2), body, int(match.group(3)))
            self._files.append((path, batch))
            self._size += len(body)
            self._next = int(match.group(1)) + 1

    def add(self, batch: Batch) -> list[Batch]:
        path = self._dir / f"{self._next:012d}.{batch.payload_id}.{batch.events}.json"
        self._next += 1
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(batch.body)
        os.replace(temporary, path)
        self._files.append((path, batch))
        self._size += len(batch.body)
        dropped = []
        while self._size > self._max and self._files:
            dropped.append(self._pop())
        return dropped

    def _pop(self) -> Batch:
        path, batch = self._files.popleft()
        self._size -= len(batch.body)
        path.unlink(missing_ok=True)
        return batch

    def head(self) -> Batch | None:
        return self._files[0][1] if self._files else None

    def remove_head(self) -> None:
        self._pop()

    def __len__(self) -> int:
        return len(self._files)

    @property
    def size(self) -> int:
        return self._size
