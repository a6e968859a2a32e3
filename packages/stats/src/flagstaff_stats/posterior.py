"""Each treatment's own posterior: LaunchDarkly's per-treatment `mean`, `credibleInterval`,
`distribution` and `model`, and the input of `pBest` (`best_arm`).

conversion (no covariate):  Beta(1 + c, 1 + n − c)   a uniform Beta(1, 1) prior (Bayes–Laplace);
                            mean = w·c/n + (1 − w)·½ with data weight w = n/(n + 2)
numeric, or CUPED-adjusted: N(μ̂, σ̂²/n)          a flat prior (data weight 1): the normal
                            approximation of the sampling distribution of the mean
(LaunchDarkly's `bayesianBeta` and `bayesianNormal` models, whose posterior mean is
w·dataMean + (1 − w)·priorMean.) An arm with fewer than two units has no posterior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flagstaff_stats.difference import ArmEstimate
from flagstaff_stats.distribution import (
    beta_cdf,
    beta_quantile,
    normal_cdf,
    normal_quantile,
)
from flagstaff_stats.interval import Interval
from flagstaff_stats.summary import Summary

PRIOR_ALPHA = 1.0
PRIOR_BETA = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalPosterior:
    """N(mu, sigma²) for a treatment's mean under a flat prior."""

    mu: float
    sigma: float

    @property
    def mean(self) -> float:
        """The posterior mean."""
        return self.mu

    @property
    def data_weight(self) -> float:
        """The flat prior leaves the data all the weight."""
        return 1.0

    def cdf(self, x: float) -> float:
        """P(mean ≤ x)."""
        return normal_cdf((x - self.mu) / self.sigma)

    def quantile(self, p: float) -> float:
        """The p-quantile of the posterior."""
        return self.mu + self.sigma * normal_quantile(p)


@dataclass(frozen=True, slots=True, kw_only=True)
class BetaPosterior:
    """Beta(alpha, beta) for a treatment's conversion rate."""

    alpha: float
    beta: float

    @property
    def mean(self) -> float:
        """α/(α + β)."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def data_weight(self) -> float:
        """n/(n + α₀ + β₀): the share of the posterior mean that comes from the data."""
        n = self.alpha + self.beta - PRIOR_ALPHA - PRIOR_BETA
        return n / (n + PRIOR_ALPHA + PRIOR_BETA)

    def cdf(self, x: float) -> float:
        """P(rate ≤ x)."""
        if x <= 0:
            return 0.0
        if x >= 1:
            return 1.0
        return beta_cdf(x, self.alpha, self.beta)

    def quantile(self, p: float) -> float:
        """The p-quantile of the posterior."""
        return beta_quantile(p, self.alpha, self.beta)


Posterior = NormalPosterior | BetaPosterior


def credible_interval(posterior: Posterior, alpha: float) -> Interval:
    """The equal-tailed (1 − α) credible interval."""
    return Interval(
        lower=posterior.quantile(alpha / 2.0), upper=posterior.quantile(1 - alpha / 2.0)
    )


def conversion_posterior(summary: Summary) -> BetaPosterior | None:
    """Beta(1 + conversions, 1 + non-conversions), or None for fewer than two units."""
    if summary.n < 2:
        return None
    return BetaPosterior(alpha=PRIOR_ALPHA + summary.sum, beta=PRIOR_BETA + summary.n - summary.sum)


def mean_posterior(estimate: ArmEstimate) -> NormalPosterior | None:
    """N(mean, variance/n), or None for fewer than two units or no spread."""
    if estimate.n < 2 or estimate.variance <= 0:
        return None
    return NormalPosterior(mu=estimate.mean, sigma=math.sqrt(estimate.variance / estimate.n))
