"""pBest by quadrature against Monte Carlo draws from the same posteriors, and the posteriors
themselves (LaunchDarkly's `bayesianBeta` and `bayesianNormal` models)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flagstaff_stats import (
    ArmEstimate,
    BetaPosterior,
    NormalPosterior,
    Posterior,
    SuccessCriterion,
    Summary,
    probabilities_to_be_best,
)
from flagstaff_stats.posterior import conversion_posterior, credible_interval, mean_posterior
from scipy import stats

DRAWS = 400_000
TOLERANCE = 4 * math.sqrt(0.25 / DRAWS)  # 4 Monte Carlo standard errors of a proportion


def _draws(posterior: Posterior, rng: np.random.Generator) -> np.ndarray:
    if isinstance(posterior, BetaPosterior):
        return rng.beta(posterior.alpha, posterior.beta, DRAWS)
    return rng.normal(posterior.mu, posterior.sigma, DRAWS)


CASES: dict[str, list[Posterior]] = {
    "three conversion arms": [
        BetaPosterior(alpha=501, beta=4501),
        BetaPosterior(alpha=531, beta=4471),
        BetaPosterior(alpha=521, beta=4481),
    ],
    "four numeric arms, unequal spread": [
        NormalPosterior(mu=10.0, sigma=0.20),
        NormalPosterior(mu=10.1, sigma=0.05),
        NormalPosterior(mu=10.3, sigma=0.40),
        NormalPosterior(mu=9.8, sigma=0.10),
    ],
    "two numeric arms": [NormalPosterior(mu=1.0, sigma=0.1), NormalPosterior(mu=1.05, sigma=0.02)],
    "two conversion arms": [BetaPosterior(alpha=51, beta=351), BetaPosterior(alpha=63, beta=359)],
    "one tight arm far out": [
        NormalPosterior(mu=0.0, sigma=1.0),
        NormalPosterior(mu=3.0, sigma=0.001),
    ],
}


@pytest.mark.parametrize("criterion", list(SuccessCriterion))
@pytest.mark.parametrize("name", list(CASES))
def test_p_best_matches_monte_carlo(name: str, criterion: SuccessCriterion) -> None:
    posteriors = CASES[name]
    ours = probabilities_to_be_best(posteriors, criterion)
    draws = np.stack([_draws(p, np.random.default_rng(31 + i)) for i, p in enumerate(posteriors)])
    best = draws.argmax(axis=0) if criterion.sign > 0 else draws.argmin(axis=0)
    counted = np.bincount(best, minlength=len(posteriors)) / DRAWS
    assert sum(ours) == pytest.approx(1.0, abs=1e-6)
    for mine, theirs in zip(ours, counted, strict=True):
        assert mine == pytest.approx(theirs, abs=TOLERANCE)


def test_conversion_posterior_is_beta_with_a_uniform_prior() -> None:
    posterior = conversion_posterior(Summary.of_conversions(units=400, converted=50))
    assert posterior == BetaPosterior(alpha=51.0, beta=351.0)
    # LaunchDarkly's reading: posterior mean = w·dataMean + (1 − w)·priorMean.
    w = posterior.data_weight
    assert posterior.mean == pytest.approx(w * 50 / 400 + (1 - w) * 0.5, rel=1e-12)
    interval = credible_interval(posterior, 0.05)
    assert interval.lower == pytest.approx(stats.beta.ppf(0.025, 51, 351), rel=1e-9)
    assert interval.upper == pytest.approx(stats.beta.ppf(0.975, 51, 351), rel=1e-9)


def test_mean_posterior_is_the_normal_sampling_distribution() -> None:
    values = np.random.default_rng(3).normal(4.0, 2.0, 900)
    summary = Summary.of_values(values.tolist())
    posterior = mean_posterior(ArmEstimate.of(summary))
    assert posterior is not None
    assert posterior.mu == pytest.approx(values.mean(), rel=1e-12)
    assert posterior.sigma == pytest.approx(values.std(ddof=1) / 30, rel=1e-9)
    assert credible_interval(posterior, 0.1).upper == pytest.approx(
        stats.norm.ppf(0.95, posterior.mu, posterior.sigma), rel=1e-12
    )


def test_arms_with_fewer_than_two_units_have_no_posterior() -> None:
    assert conversion_posterior(Summary.of_conversions(units=1, converted=1)) is None
    assert mean_posterior(ArmEstimate.of(Summary.of_values([2.0]))) is None
    assert mean_posterior(ArmEstimate.of(Summary.of_values([2.0, 2.0]))) is None
