"""A two-sided interval [lower, upper]: what every method reports around its estimate."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """The interval from `lower` to `upper` (a confidence, confidence-sequence or credible one)."""

    lower: float
    upper: float

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the closed interval."""
        return self.lower <= value <= self.upper
