"""Bayesian comparison with a Gaussian prior on the effect: the chance a treatment beats the
baseline, a credible interval, and the expected loss (risk) of shipping it or of keeping the
baseline.

GrowthBook gbstats 0.8.0 `EffectBayesianABTest`: the effect Δ (a `Difference`, absolute or
relative) has likelihood N(Δ̂, V). With a proper prior N(m₀, v₀) the posterior is
N(m, 1/P) with P = 1/V + 1/v₀ and m = (Δ̂/V + m₀/v₀)/P (conjugate normal update, e.g. Gelman
et al., Bayesian Data Analysis, §2.5); with the flat (improper) prior, GrowthBook's default,
it is N(Δ̂, V). Writing g = sΔ for the gain (s = +1 when higher is better, −1 when lower is):

chance to win          = P(g > 0) = Φ(s·m/σ)
credible interval      = m ± Φ⁻¹(1 − α/2)·σ
expected loss (ship)   = E[max(−g, 0)] = −μg·Φ(−μg/σ) + σ·φ(μg/σ),   μg = s·m
expected loss (keep)   = E[max(g, 0)]   =  μg·Φ(μg/σ)  + σ·φ(μg/σ)
(the partial expectations of a normal variable; gbstats' `risk` pair, swapped for inverse metrics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flagstaff_stats.criterion import SuccessCriterion
from flagstaff_stats.difference import Difference
from flagstaff_stats.distribution import normal_cdf, normal_pdf, normal_quantile
from flagstaff_stats.errors import InvalidSetting
from flagstaff_stats.interval import Interval
from flagstaff_stats.significance import ALPHA, check_alpha


@dataclass(frozen=True, slots=True, kw_only=True)
class GaussianPrior:
    """A proper normal prior N(mean, variance) on the effect, on the `Difference`'s scale
    (GrowthBook's metric default when a prior is switched on: relative, mean 0, sd 0.1)."""

    mean: float = 0.0
    variance: float = 0.01

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mean) and math.isfinite(self.variance) and self.variance > 0):
            raise InvalidSetting("a Gaussian prior needs a finite mean and a positive variance")


@dataclass(frozen=True, slots=True, kw_only=True)
class BayesianResult:
    """The posterior of the effect and what it says about shipping the treatment."""

    mean: float
    std_dev: float
    interval: Interval
    chance_to_win: float
    expected_loss: float  # of shipping the treatment, on the effect's scale
    baseline_expected_loss: float  # of keeping the baseline


def bayesian_test(
    difference: Difference,
    *,
    criterion: SuccessCriterion = SuccessCriterion.HIGHER_THAN_BASELINE,
    prior: GaussianPrior | None = None,
    alpha: float = ALPHA,
) -> BayesianResult:
    """The posterior of `difference` under `prior` (flat when None)."""
    check_alpha(alpha)
    if prior is None:
        mean, variance = difference.estimate, difference.variance
    else:
        precision = 1.0 / difference.variance + 1.0 / prior.variance
        mean = (difference.estimate / difference.variance + prior.mean / prior.variance) / precision
        variance = 1.0 / precision
    sigma = math.sqrt(variance)
    gain = criterion.sign * mean
    z = gain / sigma
    density = sigma * normal_pdf(z)
    half_width = normal_quantile(1.0 - alpha / 2.0) * sigma
    return BayesianResult(
        mean=mean,
        std_dev=sigma,
        interval=Interval(lower=mean - half_width, upper=mean + half_width),
        chance_to_win=normal_cdf(z),
        expected_loss=max(0.0, -gain * normal_cdf(-z) + density),
        baseline_expected_loss=max(0.0, gain * normal_cdf(z) + density),
    )
