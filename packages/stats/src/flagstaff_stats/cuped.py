"""CUPED: variance reduction with a pre-exposure covariate of the same metric (Deng, Xu, Kohavi
and Walker, "Improving the sensitivity of online controlled experiments by utilizing
pre-experiment data", WSDM 2013).

One θ for the metric, from the units of every arm pooled (GrowthBook gbstats 0.8.0
`compute_theta` pools the two arms it compares; pooling all arms gives every comparison the
same adjusted scale):
  θ = Cov(Y, X)/Var(X)  (the OLS slope of Y on X over all units; 0 when Var(X) or Var(Y) is 0)
Per arm k, with X̄ the pooled covariate mean:
  adjusted mean      Ȳk − θ(X̄k − X̄)
  adjusted variance  Var(Yk) + θ²·Var(Xk) − 2θ·Cov(Yk, Xk)   (per unit, floored at 0)
Centring on X̄ leaves every difference of means as gbstats computes it (μY − θμX) and keeps
each arm's adjusted mean on the metric's own scale. Randomisation makes E[X̄B − X̄A] = 0, so
the adjusted difference stays unbiased while its variance shrinks by about ρ²(X, Y).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce

from flagstaff_stats.difference import ArmEstimate
from flagstaff_stats.errors import InvalidSetting
from flagstaff_stats.summary import CovariateSummary


@dataclass(frozen=True, slots=True, kw_only=True)
class CupedAdjustment:
    """θ, what it comes from, and each arm's adjusted estimate (in the order given)."""

    theta: float
    correlation: float  # pooled Pearson correlation of outcome and covariate
    standard_deviation_ratio: float  # pooled sd(outcome)/sd(covariate); θ = correlation × ratio
    pooled_covariate_mean: float
    pooled_covariate_std_dev: float
    arms: tuple[ArmEstimate, ...]


def cuped_adjust(arms: Sequence[CovariateSummary]) -> CupedAdjustment:
    """Adjust every arm's mean and variance by the covariate, with θ from all arms pooled."""
    if not arms:
        raise InvalidSetting("CUPED needs at least one arm")
    pooled = reduce(CovariateSummary.merged, arms)
    var_post, var_pre = pooled.post.variance, pooled.pre.variance
    if var_post > 0 and var_pre > 0:
        covariance = pooled.covariance
        theta = covariance / var_pre
        correlation = covariance / math.sqrt(var_post * var_pre)
        ratio = math.sqrt(var_post / var_pre)
    else:  # nothing to learn from the covariate: the adjustment is the identity
        theta, correlation, ratio = 0.0, 0.0, 0.0
    centre = pooled.pre.mean
    adjusted = tuple(
        ArmEstimate(
            n=arm.post.n,
            mean=arm.post.mean - theta * (arm.pre.mean - centre),
            variance=max(
                0.0,
                arm.post.variance + theta * theta * arm.pre.variance - 2.0 * theta * arm.covariance,
            ),
            unadjusted_mean=arm.post.mean,
        )
        for arm in arms
    )
    return CupedAdjustment(
        theta=theta,
        correlation=correlation,
        standard_deviation_ratio=ratio,
        pooled_covariate_mean=centre,
        pooled_covariate_std_dev=pooled.pre.std_dev,
        arms=adjusted,
    )
