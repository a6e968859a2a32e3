"""The two types every storage port speaks in: parsed JSON objects and the injected clock.
Pure declarations (no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

JsonObject = dict[str, Any]
"""A parsed JSON object. Repositories hand out copies: mutating one never changes the store."""


Clock = Callable[[], datetime]
"""Where time comes from: returns an aware UTC datetime. Injected by the composition root."""


__all__ = [
    "Clock",
    "JsonObject",
]
