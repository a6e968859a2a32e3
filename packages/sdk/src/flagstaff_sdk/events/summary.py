"""The summary of evaluations between two flushes: per flag, its default, the context kinds seen
and one counter per (variation, flag version). Owned by the actor; must not format contexts.
"""

from __future__ import annotations

from typing import Any


class Summary:
    """Counts evaluations; `to_event()` gives the `summary` event, `clear()` starts over.

    Counters live in one flat dict keyed by (flag key, variation, version) because the actor
    counts every evaluation a client makes; per-flag facts are kept beside it.
    """

    def __init__(self) -> None:
        # (key, variation, version) -> [count, value, kinds tuple last merged]
        self.counters: dict[tuple[str, int | None, int | None], list[Any]] = {}
        self._defaults: dict[str, Any] = {}
        self._kinds: dict[str, set[str]] = {}
        self.start = 0.0
        self.end = 0.0
        """Seconds (wall clock) of the first and last evaluation counted."""

    def __bool__(self) -> bool:
        return bool(self.counters)

    def count(
        self,
        key: str,
        kinds: tuple[str, ...],
        variation: int | None,
        version: int | None,
        value: Any,
        default: Any,
        at: float,
    ) -> None:
        counter = self.counters.get((key, variation, version))
        if counter is None:
            self.add_counter(key, kinds, variation, version, value, default, at)
            return
        counter[0] += 1
        if counter[2] is not kinds:
            self.merge_kinds(key, kinds, counter)
        if at > self.end:
            self.end = at
        elif at < self.start:
            self.start = at

    def add_counter(
        self,
        key: str,
        kinds: tuple[str, ...],
        variation: int | None,
        version: int | None,
        value: Any,
        default: Any,
        at: float,
    ) -> None:
        counter = [1, value, kinds]
        self.counters[(key, variation, version)] = counter
        if key not in self._defaults:
            self._defaults[key] = default
        self.merge_kinds(key, kinds, counter)
        if self.start == 0 or at < self.start:
            self.start = at
        if at > self.end:
            self.end = at

    def merge_kinds(self, key: str, kinds: tuple[str, ...], counter: list[Any]) -> None:
        """Kinds of the context behind `counter`'s latest evaluation (skipped when unchanged)."""
        counter[2] = kinds
        known = self._kinds.get(key)
        if known is None:
            self._kinds[key] = set(kinds)
        else:
            known.update(kinds)

    def evaluations(self) -> int:
        """How many evaluations this summary counts (for stats and tests)."""
        return sum(counter[0] for counter in self.counters.values())

    def to_event(self) -> dict[str, Any]:
        features: dict[str, Any] = {}
        for (key, variation, version), (count, value, _) in self.counters.items():
            feature = features.get(key)
            if feature is None:
                feature = features[key] = {
                    "default": self._defaults[key],
                    "contextKinds": sorted(self._kinds[key]),
                    "counters": [],
                }
            counter: dict[str, Any] = {"count": count, "value": value}
            if variation is not None:
                counter["variation"] = variation
            if version is None:
                counter["unknown"] = True
            else:
                counter["version"] = version
            feature["counters"].append(counter)
        return {
            "kind": "summary",
            "startDate": int(self.start * 1000),
            "endDate": int(self.end * 1000),
            "features": features,
        }

    def clear(self) -> None:
        self.counters = {}
        self._defaults = {}
        self._kinds = {}
        self.start = 0.0
        self.end = 0.0
