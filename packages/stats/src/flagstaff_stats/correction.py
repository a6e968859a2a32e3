"""Multiple-comparison corrections of a family of p-values (every treatment against the
baseline, across the metrics of an experiment): adjusted p-values, in the order given.

Bonferroni:           p̃ᵢ = min(1, m·pᵢ)                                   (controls FWER)
Holm (1979):          sort p₍₁₎ ≤ … ≤ p₍ₘ₎;  p̃₍ᵢ₎ = maxⱼ≤ᵢ min(1, (m − j + 1)·p₍ⱼ₎)   (FWER,
                      uniformly more powerful than Bonferroni)
Benjamini–Hochberg (1995): p̃₍ᵢ₎ = minⱼ≥ᵢ min(1, m/j · p₍ⱼ₎)              (controls FDR under
                      independence or positive dependence)
These are statsmodels' `multipletests` methods "bonferroni", "holm" and "fdr_bh".
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

from flagstaff_stats.errors import InvalidSetting


class Correction(enum.Enum):
    """Which correction a family of p-values gets."""

    NONE = "none"
    BONFERRONI = "bonferroni"
    HOLM = "holm"
    BENJAMINI_HOCHBERG = "benjaminiHochberg"


def adjust_p_values(p_values: Sequence[float], method: Correction) -> tuple[float, ...]:
    """The adjusted p-values of the family `p_values`, in the same order."""
    for p in p_values:
        if not (math.isfinite(p) and 0 <= p <= 1):
            raise InvalidSetting(f"a p-value must lie in [0, 1], not {p!r}")
    m = len(p_values)
    if method is Correction.NONE or m == 0:
        return tuple(p_values)
    if method is Correction.BONFERRONI:
        return tuple(min(1.0, m * p) for p in p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    if method is Correction.HOLM:
        running = 0.0
        for rank, index in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[index]))
            adjusted[index] = running
        return tuple(adjusted)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        index = order[rank]
        running = min(running, m / (rank + 1) * p_values[index])
        adjusted[index] = min(1.0, running)
    return tuple(adjusted)
