"""Whether a flag is stale, read from its REST document alone: archived, or older than a week and
serving the same one variation to everyone in every environment (so code could hard-wire it).
Pure: the time is handed in. `services.code_ref_usage` adds the code references to this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NEW_FOR_MS = 7 * 24 * 3600 * 1000
"""A flag younger than this is new: off everywhere because nobody has released it yet."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Staleness:
    stale: bool
    reason: str


def served_variation(config: dict[str, Any]) -> int | None:
    """The one variation an environment serves to every context, or None when it may serve
    several (targets, rules, prerequisites, a rollout)."""
    if not config.get("on", False):
        off = config.get("offVariation")
        return off if isinstance(off, int) else None
    if config.get("prerequisites") or config.get("rules"):
        return None
    for name in ("targets", "contextTargets"):
        if any(target.get("values") for target in config.get(name) or []):
            return None
    fallthrough = config.get("fallthrough") or {}
    variation = fallthrough.get("variation")
    return variation if isinstance(variation, int) and "rollout" not in fallthrough else None


def staleness(flag: dict[str, Any], now_ms: int) -> Staleness:
    if flag.get("archived"):
        return Staleness(stale=True, reason="archived")
    created = flag.get("creationDate")
    if isinstance(created, int) and now_ms - created < NEW_FOR_MS:
        return Staleness(stale=False, reason="new: created less than 7 days ago")
    variations = flag.get("variations") or []
    served = {served_variation(c) for c in (flag.get("environments") or {}).values()}
    if not served or None in served:
        return Staleness(stale=False, reason="serves different variations to different contexts")
    chosen = [i for i in served if i is not None]
    values = {repr(variations[i]["value"]) if 0 <= i < len(variations) else None for i in chosen}
    if len(values) != 1:
        return Staleness(stale=False, reason="environments serve different variations")
    return Staleness(stale=True, reason="serves one variation to everyone in every environment")
