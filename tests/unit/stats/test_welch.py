"""Welch's t-test against scipy's `ttest_ind(equal_var=False)` on fixed data, and the relative
(delta-method) form against a Monte Carlo sampling distribution and interval coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flagstaff_stats import (
    ArmEstimate,
    Difference,
    DifferenceKind,
    InvalidSetting,
    Shortfall,
    Summary,
    difference,
    welch_test,
)
from scipy import stats
from stats_data import numeric_pairs, summary


def _absolute(a: np.ndarray, b: np.ndarray) -> Difference:
    found = difference(
        ArmEstimate.of(summary(a)), ArmEstimate.of(summary(b)), DifferenceKind.ABSOLUTE
    )
    assert isinstance(found, Difference)
    return found


@pytest.mark.parametrize("name", list(numeric_pairs()))
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_welch_matches_scipy(name: str, alpha: float) -> None:
    a, b = numeric_pairs()[name]
    reference = stats.ttest_ind(b, a, equal_var=False)
    interval = reference.confidence_interval(confidence_level=1 - alpha)
    ours = welch_test(_absolute(a, b), alpha=alpha)
    assert ours.estimate == pytest.approx(b.mean() - a.mean(), rel=1e-9)
    assert ours.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert ours.degrees_of_freedom == pytest.approx(reference.df, rel=1e-9)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-7, abs=1e-300)
    assert ours.interval.lower == pytest.approx(interval.low, rel=1e-9)
    assert ours.interval.upper == pytest.approx(interval.high, rel=1e-9)


def test_relative_variance_matches_the_sampling_variance_of_the_lift() -> None:
    # The delta method's Var((x̄B − x̄A)/x̄A) against the spread of that lift over 200,000
    # simulated experiments of the same design (the mean of n normal values is exactly
    # N(μ, σ²/n), so the means are drawn directly; Monte Carlo error of a variance: ~0.3 %).
    rng = np.random.default_rng(7)
    n_a, n_b, mu_a, mu_b, sd_a, sd_b = 400, 600, 10.0, 11.0, 4.0, 6.0
    means_a = rng.normal(mu_a, sd_a / math.sqrt(n_a), 200_000)
    means_b = rng.normal(mu_b, sd_b / math.sqrt(n_b), 200_000)
    lifts = (means_b - means_a) / means_a
    ours = difference(
        ArmEstimate(n=n_a, mean=mu_a, variance=sd_a**2, unadjusted_mean=mu_a),
        ArmEstimate(n=n_b, mean=mu_b, variance=sd_b**2, unadjusted_mean=mu_b),
        DifferenceKind.RELATIVE,
    )
    assert isinstance(ours, Difference)
    assert ours.estimate == pytest.approx(0.1)
    assert ours.variance == pytest.approx(lifts.var(ddof=1), rel=0.02)


def test_relative_interval_covers_the_true_lift_at_its_level() -> None:
    # 2,000 experiments with a true lift of +5 %: the 95 % interval covers it in 95 % ± 1.3 %
    # (2.58 Monte Carlo standard errors) of them.
    rng = np.random.default_rng(11)
    runs, n = 2000, 800
    covered = 0
    for _ in range(runs):
        a = rng.exponential(10.0, n)
        b = rng.exponential(10.5, n)
        found = difference(
            ArmEstimate.of(summary(a)), ArmEstimate.of(summary(b)), DifferenceKind.RELATIVE
        )
        assert isinstance(found, Difference)
        covered += welch_test(found).interval.contains(0.05)
    error = 2.58 * math.sqrt(0.05 * 0.95 / runs)
    assert abs(covered / runs - 0.95) <= error


def test_thin_or_constant_arms_have_no_estimate() -> None:
    one = ArmEstimate.of(Summary.of_values([3.0]))
    many = ArmEstimate.of(Summary.of_values([1.0, 2.0, 3.0]))
    zeros = ArmEstimate.of(Summary.of_values([0.0, 0.0, 0.0]))
    constant = ArmEstimate.of(Summary.of_values([2.0, 2.0]))
    assert difference(one, many, DifferenceKind.ABSOLUTE) is Shortfall.TOO_FEW_UNITS
    assert difference(many, one, DifferenceKind.RELATIVE) is Shortfall.TOO_FEW_UNITS
    assert difference(constant, constant, DifferenceKind.ABSOLUTE) is Shortfall.ZERO_VARIANCE
    assert difference(zeros, many, DifferenceKind.RELATIVE) is Shortfall.ZERO_BASELINE
    assert difference(many, zeros, DifferenceKind.RELATIVE) is Shortfall.ZERO_VARIANCE
    assert isinstance(difference(zeros, many, DifferenceKind.ABSOLUTE), Difference)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, float("nan")])
def test_alpha_outside_zero_one_is_refused(alpha: float) -> None:
    a, b = numeric_pairs()["tiny"]
    with pytest.raises(InvalidSetting, match="alpha"):
        welch_test(_absolute(a, b), alpha=alpha)
