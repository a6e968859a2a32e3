"""Data-source status: whether the data a client evaluates with is current, since when, the last
error and how old the data is. Values only; the actor decides the state.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class DataSourceState(enum.Enum):
    INITIALIZING = "INITIALIZING"
    """No data from any source yet; evaluations return defaults (CLIENT_NOT_READY)."""
    VALID = "VALID"
    """A stream is connected or the last poll succeeded: the data is current."""
    INTERRUPTED = "INTERRUPTED"
    """There is data (maybe from the disk cache) but no source is confirming it right now."""
    OFF = "OFF"
    """Not trying: closed, offline, or the SDK key was refused (retried only rarely)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorInfo:
    kind: str
    """`network`, `http`, `payload`, `timeout`, `file` or `source`."""
    message: str
    status: int | None = None
    at: float = 0.0
    """Wall-clock time (epoch seconds)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DataSourceStatus:
    state: DataSourceState
    since: float
    """Wall-clock time the state last changed."""
    last_error: ErrorInfo | None = None
    data_age: float | None = None
    """Seconds since the data held was last known current; None when there is no data."""
    source: str = "none"
    """What feeds the client now: `stream`, `poll`, `stream+poll`; `cache` (disk cache or
    bootstrap file, no network answer yet); `stale` (the network answered before, not now);
    `file`, `test-data` or a custom source's name; `none`."""
    endpoint: str | None = None
    """The endpoint (region) name the network sources use now."""
