"""What callers send the event actor besides events: flush now, a barrier to wait on, a stream
attempt for the next diagnostic event, stop. Values only; the actor decides what each means.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Flush:
    pass


@dataclass(frozen=True, slots=True)
class Sync:
    done: threading.Event


@dataclass(frozen=True, slots=True)
class StreamInit:
    timestamp_ms: int
    duration_ms: int
    failed: bool


@dataclass(frozen=True, slots=True)
class Stop:
    timeout: float


Control = Flush | Sync | StreamInit | Stop
