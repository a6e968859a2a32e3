"""Events as an SDK reports them for experiments and guarded rollouts: a feature event whose
reason is in the experiment (an exposure) and a custom event (a `track`, with or without a
metric value)."""

from __future__ import annotations

from typing import Any


def exposure(flag: str, user: str, variation: int, version: int, at: int) -> dict[str, Any]:
    return {
        "kind": "feature",
        "creationDate": at,
        "key": flag,
        "version": version,
        "variation": variation,
        "value": variation == 0,
        "context": {"kind": "user", "key": user},
        "reason": {"kind": "FALLTHROUGH", "inExperiment": True},
    }


def track(user: str, event: str, at: int, value: float | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "custom",
        "creationDate": at,
        "key": event,
        "context": {"kind": "user", "key": user},
    }
    if value is not None:
        body["metricValue"] = value
    return body
