"""The real clock, for the composition root to inject; adapters and services never call it."""

from __future__ import annotations

from datetime import UTC, datetime


def system_clock() -> datetime:
    return datetime.now(UTC)
