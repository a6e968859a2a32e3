"""Always-valid (sequential) intervals and p-values: read them after every new batch of data,
stop whenever, and the chance of ever excluding a true difference stays at most α.

The asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas,
"Time-uniform central limit theory and asymptotic confidence sequences" (Annals of Statistics,
2024; arXiv:2103.06476, Theorem 2.2 with Robbins' normal mixture), in the form GrowthBook
gbstats 0.8.0 uses for two-sample tests (`SequentialTwoSidedTTest`):

N = nA + nB,  s² = N·Var(Δ),  ρ² = (−2 ln α + ln(−2 ln α + 1))/τ
CS = Δ ± s·√( 2(Nρ² + 1)/(N²ρ²) · ln(√(Nρ² + 1)/α) )
p  = min(1, 1/E),  ln E = ρ²·N²·Δ²/(2·s²·(Nρ² + 1)) − ½·ln(Nρ² + 1)

so that p ≤ α exactly when the sequence excludes 0. τ, the tuning parameter, is the total
sample size at which the sequence is tightest (ρ minimises the width there, Howard et al. 2021,
"Time-uniform, nonparametric, nonasymptotic confidence sequences", eq. 3.4); GrowthBook's
default is 5,000. The mixture is a normal one, so this is a mixture sequential probability ratio
test (mSPRT, Robbins 1970; Johari et al. 2017 for its use in A/B testing) on Δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flagstaff_stats.difference import Difference
from flagstaff_stats.errors import InvalidSetting
from flagstaff_stats.interval import Interval
from flagstaff_stats.significance import ALPHA, check_alpha

TUNING = 5000.0  # GrowthBook's default τ: the sequence is tightest at 5,000 units in all


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialResult:
    """The estimate, the always-valid p-value, the (1 − α) confidence sequence and ρ²."""

    estimate: float
    p_value: float
    interval: Interval
    mixing_variance: float  # ρ²


def mixing_variance(*, alpha: float, tuning: float) -> float:
    """ρ² = (−2 ln α + ln(−2 ln α + 1))/τ: the mixture's variance tuned for N = τ."""
    check_alpha(alpha)
    if not (math.isfinite(tuning) and tuning > 0):
        raise InvalidSetting(f"the sequential tuning parameter must be positive, not {tuning!r}")
    log_term = -2.0 * math.log(alpha)
    return (log_term + math.log(log_term + 1.0)) / tuning


def sequential_test(
    difference: Difference, *, alpha: float = ALPHA, tuning: float = TUNING
) -> SequentialResult:
    """The always-valid test of `difference` against 0 at the current sample size."""
    rho2 = mixing_variance(alpha=alpha, tuning=tuning)
    n = float(difference.units)
    spread = n * rho2 + 1.0
    s2 = difference.variance * n
    half_width = math.sqrt(s2 * 2.0 * spread / (n * n * rho2) * math.log(math.sqrt(spread) / alpha))
    # ln E: the log of the mixture likelihood ratio (an e-value); computed in logs so a large
    # effect cannot overflow exp().
    log_e = rho2 * n * n * difference.estimate**2 / (2.0 * s2 * spread) - 0.5 * math.log(spread)
    p_value = 1.0 if log_e <= 0 else math.exp(-log_e)
    return SequentialResult(
        estimate=difference.estimate,
        p_value=p_value,
        interval=Interval(
            lower=difference.estimate - half_width, upper=difference.estimate + half_width
        ),
        mixing_variance=rho2,
    )
