"""The summary of evaluations between two flushes: per flag, its default, the context kinds seen
and one counter per (variation, flag version). Owned by the actor; must not format contexts.
"""

from __future__ import annotations

from typing import Any


class _FlagCounters:
    __slots__ = ("counters", "default", "kinds")

    def __init__(self, default: Any) -> None:
        self.default = default
        self.kinds: set[str] = set()
        # (variation, version) -> [count, value]; version None means the flag was unknown
        self.counters: dict[tuple[int | None, int | None], list[Any]] = {}


class Summary:
    """Counts evaluations; `to_event()` gives the `summary` event, `clear()` starts over."""

    def __init__(self) -> None:
        self._flags: dict[str, _FlagCounters] = {}
        self.start_date = 0
        self.end_date = 0

    def __bool__(self) -> bool:
        return bool(self._flags)

    def count(
        self,
        key: str,
        kinds: tuple[str, ...],
        variation: int | None,
        version: int | None,
        value: Any,
        default: Any,
        timestamp: int,
    ) -> None:
        flag = self._flags.get(key)
        if flag is None:
            flag = self._flags[key] = _FlagCounters(default)
        flag.kinds.update(kinds)
        counter = flag.counters.get((variation, version))
        if counter is None:
            flag.counters[(variation, version)] = [1, value]
        else:
            counter[0] += 1
        if self.start_date == 0 or timestamp < self.start_date:
            self.start_date = timestamp
        if timestamp > self.end_date:
            self.end_date = timestamp

    def evaluations(self) -> int:
        """How many evaluations this summary counts (for stats and tests)."""
        return sum(c[0] for f in self._flags.values() for c in f.counters.values())

    def to_event(self) -> dict[str, Any]:
        features: dict[str, Any] = {}
        for key, flag in self._flags.items():
            counters = []
            for (variation, version), (count, value) in flag.counters.items():
                counter: dict[str, Any] = {"count": count, "value": value}
                if variation is not None:
                    counter["variation"] = variation
                if version is None:
                    counter["unknown"] = True
                else:
                    counter["version"] = version
                counters.append(counter)
            features[key] = {
                "default": flag.default,
                "contextKinds": sorted(flag.kinds),
                "counters": counters,
            }
        return {
            "kind": "summary",
            "startDate": self.start_date,
            "endDate": self.end_date,
            "features": features,
        }

    def clear(self) -> None:
        self._flags = {}
        self.start_date = 0
        self.end_date = 0
