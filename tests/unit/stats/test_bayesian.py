"""The Bayesian comparison against Monte Carlo: draws from the posterior it states (its closed
forms for chance to win, interval and expected loss), importance sampling of prior × likelihood
(its conjugate update), and the exact Beta–Binomial model of a conversion metric (how close the
Gaussian approach on the difference comes). Seeded, so every run draws the same numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flagstaff_stats import (
    ArmEstimate,
    Difference,
    DifferenceKind,
    GaussianPrior,
    InvalidSetting,
    SuccessCriterion,
    Summary,
    bayesian_test,
    difference,
)

DRAWS = 400_000
# Monte Carlo tolerance for a probability: 4 standard errors of a proportion near ½.
PROBABILITY_TOLERANCE = 4 * math.sqrt(0.25 / DRAWS)


def _conversion_difference(
    a: tuple[int, int], b: tuple[int, int], kind: DifferenceKind
) -> Difference:
    found = difference(
        ArmEstimate.of(Summary.of_conversions(units=a[1], converted=a[0])),
        ArmEstimate.of(Summary.of_conversions(units=b[1], converted=b[0])),
        kind,
    )
    assert isinstance(found, Difference)
    return found


@pytest.mark.parametrize("criterion", list(SuccessCriterion))
@pytest.mark.parametrize(
    ("estimate", "variance"), [(0.03, 0.0004), (-0.01, 0.0001), (0.0, 0.01), (2.5, 1.7)]
)
def test_closed_forms_match_draws_from_the_stated_posterior(
    criterion: SuccessCriterion, estimate: float, variance: float
) -> None:
    d = Difference(
        kind=DifferenceKind.RELATIVE,
        estimate=estimate,
        variance=variance,
        degrees_of_freedom=100.0,
        units=1000,
    )
    result = bayesian_test(d, criterion=criterion)
    draws = np.random.default_rng(17).normal(result.mean, result.std_dev, DRAWS)
    gain = criterion.sign * draws
    scale = math.sqrt(variance)
    assert result.chance_to_win == pytest.approx((gain > 0).mean(), abs=PROBABILITY_TOLERANCE)
    # Expected losses: Monte Carlo standard error of a mean of max(·, 0) is at most sd/√draws.
    loss_tolerance = 4 * scale / math.sqrt(DRAWS)
    assert result.expected_loss == pytest.approx(np.maximum(-gain, 0).mean(), abs=loss_tolerance)
    assert result.baseline_expected_loss == pytest.approx(
        np.maximum(gain, 0).mean(), abs=loss_tolerance
    )
    lower, upper = np.quantile(draws, [0.025, 0.975])
    assert result.interval.lower == pytest.approx(lower, abs=0.01 * scale)
    assert result.interval.upper == pytest.approx(upper, abs=0.01 * scale)


@pytest.mark.parametrize(
    ("prior", "estimate", "variance"),
    [
        (GaussianPrior(mean=0.0, variance=0.01), 0.05, 0.0009),
        (GaussianPrior(mean=0.02, variance=0.0004), -0.03, 0.0016),
        (GaussianPrior(mean=0.0, variance=0.09), 0.4, 0.04),
    ],
)
def test_proper_prior_posterior_matches_importance_sampling(
    prior: GaussianPrior, estimate: float, variance: float
) -> None:
    # Draw the effect from the prior and weight each draw by the likelihood of the estimate.
    d = Difference(
        kind=DifferenceKind.RELATIVE,
        estimate=estimate,
        variance=variance,
        degrees_of_freedom=1000.0,
        units=2000,
    )
    result = bayesian_test(d, prior=prior)
    effects = np.random.default_rng(23).normal(prior.mean, math.sqrt(prior.variance), DRAWS)
    weights = np.exp(-((estimate - effects) ** 2) / (2 * variance))
    weights /= weights.sum()
    effective = 1.0 / (weights**2).sum()  # Kish's effective sample size of the weighted draws
    mean = float((weights * effects).sum())
    sd = math.sqrt(float((weights * (effects - mean) ** 2).sum()))
    chance = float(weights[effects > 0].sum())
    assert effective > 10_000
    assert result.mean == pytest.approx(mean, abs=5 * sd / math.sqrt(effective))
    assert result.std_dev == pytest.approx(sd, rel=5 / math.sqrt(effective))
    assert result.chance_to_win == pytest.approx(chance, abs=5 * math.sqrt(0.25 / effective))
    flat = bayesian_test(d)
    assert abs(result.mean - prior.mean) < abs(flat.mean - prior.mean)  # shrunk towards the prior


@pytest.mark.parametrize(
    ("a", "b"),
    [((500, 5000), (560, 5000)), ((1200, 10000), (1180, 10000)), ((3000, 50000), (3100, 50500))],
)
def test_chance_to_win_against_the_exact_beta_binomial_model(
    a: tuple[int, int], b: tuple[int, int]
) -> None:
    # The exact model: uniform priors, Beta posteriors per arm, P(rate B > rate A) by Monte
    # Carlo. The Gaussian approach on the absolute difference is within 0.005 of it for these
    # sizes (normal approximation plus Monte Carlo error); on the relative difference, whose
    # delta-method variance ignores the ratio's skew, within 0.01 (docs/experiments.md).
    rng = np.random.default_rng(29)
    rate_a = rng.beta(1 + a[0], 1 + a[1] - a[0], DRAWS)
    rate_b = rng.beta(1 + b[0], 1 + b[1] - b[0], DRAWS)
    exact = float((rate_b > rate_a).mean())
    absolute = bayesian_test(_conversion_difference(a, b, DifferenceKind.ABSOLUTE))
    relative = bayesian_test(_conversion_difference(a, b, DifferenceKind.RELATIVE))
    assert absolute.chance_to_win == pytest.approx(exact, abs=0.005)
    assert relative.chance_to_win == pytest.approx(exact, abs=0.01)
    gap = rate_b - rate_a
    assert absolute.expected_loss == pytest.approx(np.maximum(-gap, 0).mean(), rel=0.05, abs=1e-6)


def test_lower_is_better_swaps_chance_and_losses() -> None:
    d = _conversion_difference((500, 5000), (560, 5000), DifferenceKind.RELATIVE)
    higher = bayesian_test(d, criterion=SuccessCriterion.HIGHER_THAN_BASELINE)
    lower = bayesian_test(d, criterion=SuccessCriterion.LOWER_THAN_BASELINE)
    assert lower.chance_to_win == pytest.approx(1 - higher.chance_to_win, abs=1e-15)
    assert lower.expected_loss == pytest.approx(higher.baseline_expected_loss, rel=1e-12)
    assert lower.baseline_expected_loss == pytest.approx(higher.expected_loss, rel=1e-12)
    assert lower.interval == higher.interval


@pytest.mark.parametrize(("mean", "variance"), [(0.0, 0.0), (0.0, -1.0), (float("nan"), 1.0)])
def test_improper_gaussian_priors_are_refused(mean: float, variance: float) -> None:
    with pytest.raises(InvalidSetting, match="prior"):
        GaussianPrior(mean=mean, variance=variance)
