"""Sample-ratio mismatch: do the exposed units split as the allocation planned? A mismatch
means assignment or exposure logging is broken, and the comparison cannot be trusted.

Pearson's χ² goodness of fit (GrowthBook gbstats 0.8.0 `check_srm`):
  Eₖ = wₖ/Σw · N,   χ² = Σₖ (Oₖ − Eₖ)²/Eₖ,   p = P(χ²_{K−1} > χ²)
over the K arms with a positive weight. Two choices differ from gbstats: the degrees of
freedom count only those K arms (gbstats counts every arm), and units in an arm of weight 0
are a mismatch outright (p = 0), since no allocation can explain them.
LaunchDarkly reports `probabilityOfMismatch` = 1 − p. A mismatch is flagged when p is below
the threshold, 0.001 by default (GrowthBook's app default: the check is read at every look,
so it must be strict to stay quiet in healthy experiments).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from flagstaff_stats.distribution import chi_squared_sf
from flagstaff_stats.errors import InvalidSetting

THRESHOLD = 0.001


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleRatio:
    """The χ² statistic, its degrees of freedom, the p-value and whether it flags a mismatch."""

    chi_squared: float
    degrees_of_freedom: int
    p_value: float
    threshold: float
    mismatch: bool

    @property
    def probability_of_mismatch(self) -> float:
        """LaunchDarkly's `probabilityOfMismatch`: 1 − p."""
        return 1.0 - self.p_value


def sample_ratio_test(
    units: Sequence[int], weights: Sequence[float], *, threshold: float = THRESHOLD
) -> SampleRatio:
    """Test the observed `units` per arm against the planned allocation `weights`."""
    if len(units) != len(weights) or not units:
        raise InvalidSetting("units and weights must name the same arms, at least one")
    if any(not (math.isfinite(w) and w >= 0) for w in weights) or sum(weights) <= 0:
        raise InvalidSetting("allocation weights must be non-negative and not all 0")
    if any(n < 0 for n in units):
        raise InvalidSetting("unit counts cannot be negative")
    if not 0 < threshold < 1:
        raise InvalidSetting(f"the SRM threshold must be between 0 and 1, not {threshold!r}")
    total = sum(units)
    weight_total = sum(weights)
    planned = [(n, w) for n, w in zip(units, weights, strict=True) if w > 0]
    dof = len(planned) - 1
    stray = any(n > 0 for n, w in zip(units, weights, strict=True) if w == 0)
    if total == 0 or (dof == 0 and not stray):
        return SampleRatio(
            chi_squared=0.0,
            degrees_of_freedom=dof,
            p_value=1.0,
            threshold=threshold,
            mismatch=False,
        )
    if stray:
        return SampleRatio(
            chi_squared=math.inf,
            degrees_of_freedom=dof,
            p_value=0.0,
            threshold=threshold,
            mismatch=True,
        )
    statistic = 0.0
    for observed, weight in planned:
        expected = weight / weight_total * total
        statistic += (observed - expected) ** 2 / expected
    p_value = chi_squared_sf(statistic, dof)
    return SampleRatio(
        chi_squared=statistic,
        degrees_of_freedom=dof,
        p_value=p_value,
        threshold=threshold,
        mismatch=p_value < threshold,
    )
