"""CUPED against ordinary least squares in statsmodels: θ is the pooled OLS slope, and the
adjusted comparison is the regression of the adjusted outcome on the treatment indicator with
HC2 standard errors (which equal Welch's for a two-group regression). ANCOVA with the
treatment in the model (θ from within-arm variation) lands close, not on it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from flagstaff_stats import (
    CovariateSummary,
    Difference,
    DifferenceKind,
    Summary,
    cuped_adjust,
    difference,
)
from flagstaff_stats.difference import ArmEstimate


def _experiment(seed: int, n_a: int, n_b: int, lift: float) -> tuple[np.ndarray, ...]:
    """Pre-period spend and post-period spend that follows it, with a true lift in B."""
    rng = np.random.default_rng(seed)
    pre_a, pre_b = rng.gamma(2.0, 10.0, n_a), rng.gamma(2.0, 10.0, n_b)
    post_a = 5.0 + 0.7 * pre_a + rng.normal(0.0, 6.0, n_a)
    post_b = 5.0 + lift + 0.7 * pre_b + rng.normal(0.0, 6.0, n_b)
    return post_a, pre_a, post_b, pre_b


def _summaries(post: np.ndarray, pre: np.ndarray) -> CovariateSummary:
    return CovariateSummary(
        post=Summary(n=len(post), sum=float(post.sum()), sum_squares=float((post**2).sum())),
        pre=Summary(n=len(pre), sum=float(pre.sum()), sum_squares=float((pre**2).sum())),
        cross_sum=float((post * pre).sum()),
    )


EXPERIMENTS = [(1, 2000, 2000, 1.0), (2, 700, 1500, 0.0), (3, 5000, 4800, -0.5)]


@pytest.mark.parametrize(("seed", "n_a", "n_b", "lift"), EXPERIMENTS)
def test_theta_is_the_pooled_ols_slope(seed: int, n_a: int, n_b: int, lift: float) -> None:
    post_a, pre_a, post_b, pre_b = _experiment(seed, n_a, n_b, lift)
    post, pre = np.concatenate([post_a, post_b]), np.concatenate([pre_a, pre_b])
    ols = sm.OLS(post, sm.add_constant(pre)).fit()
    adjustment = cuped_adjust([_summaries(post_a, pre_a), _summaries(post_b, pre_b)])
    assert adjustment.theta == pytest.approx(ols.params[1], rel=1e-9)
    assert adjustment.correlation == pytest.approx(np.corrcoef(post, pre)[0, 1], rel=1e-9)
    assert adjustment.theta == pytest.approx(
        adjustment.correlation * adjustment.standard_deviation_ratio, rel=1e-12
    )


@pytest.mark.parametrize(("seed", "n_a", "n_b", "lift"), EXPERIMENTS)
def test_adjusted_comparison_matches_ols_on_the_adjusted_outcome(
    seed: int, n_a: int, n_b: int, lift: float
) -> None:
    post_a, pre_a, post_b, pre_b = _experiment(seed, n_a, n_b, lift)
    adjustment = cuped_adjust([_summaries(post_a, pre_a), _summaries(post_b, pre_b)])
    found = difference(*adjustment.arms, DifferenceKind.ABSOLUTE)
    assert isinstance(found, Difference)
    # The same adjustment done on the raw units, then regressed on the treatment indicator.
    post, pre = np.concatenate([post_a, post_b]), np.concatenate([pre_a, pre_b])
    adjusted = post - adjustment.theta * (pre - pre.mean())
    treated = np.concatenate([np.zeros(n_a), np.ones(n_b)])
    ols = sm.OLS(adjusted, sm.add_constant(treated)).fit(cov_type="HC2")
    assert found.estimate == pytest.approx(ols.params[1], rel=1e-9, abs=1e-12)
    assert math.sqrt(found.variance) == pytest.approx(ols.bse[1], rel=1e-9)
    for arm, values in zip(adjustment.arms, (adjusted[:n_a], adjusted[n_a:]), strict=True):
        assert arm.mean == pytest.approx(values.mean(), rel=1e-9)
        assert arm.variance == pytest.approx(values.var(ddof=1), rel=1e-9)


@pytest.mark.parametrize(("seed", "n_a", "n_b", "lift"), EXPERIMENTS)
def test_adjusted_effect_lands_close_to_ancova(seed: int, n_a: int, n_b: int, lift: float) -> None:
    # OLS post ~ 1 + treated + pre takes θ from within-arm variation; pooled θ differs from it
    # by the arms' outcome difference leaking into the slope, a small fraction of a standard
    # error at these sizes.
    post_a, pre_a, post_b, pre_b = _experiment(seed, n_a, n_b, lift)
    adjustment = cuped_adjust([_summaries(post_a, pre_a), _summaries(post_b, pre_b)])
    found = difference(*adjustment.arms, DifferenceKind.ABSOLUTE)
    assert isinstance(found, Difference)
    post, pre = np.concatenate([post_a, post_b]), np.concatenate([pre_a, pre_b])
    treated = np.concatenate([np.zeros(n_a), np.ones(n_b)])
    ancova = sm.OLS(post, sm.add_constant(np.column_stack([treated, pre]))).fit()
    assert abs(found.estimate - ancova.params[1]) < 0.05 * ancova.bse[1]
    assert math.sqrt(found.variance) == pytest.approx(ancova.bse[1], rel=0.02)


def test_variance_shrinks_by_about_the_squared_correlation() -> None:
    post_a, pre_a, post_b, pre_b = _experiment(4, 3000, 3000, 0.0)
    adjustment = cuped_adjust([_summaries(post_a, pre_a), _summaries(post_b, pre_b)])
    adjusted = difference(*adjustment.arms, DifferenceKind.ABSOLUTE)
    plain = difference(
        ArmEstimate.of(_summaries(post_a, pre_a).post),
        ArmEstimate.of(_summaries(post_b, pre_b).post),
        DifferenceKind.ABSOLUTE,
    )
    assert isinstance(adjusted, Difference)
    assert isinstance(plain, Difference)
    reduction = 1 - adjusted.variance / plain.variance
    assert reduction == pytest.approx(adjustment.correlation**2, abs=0.02)
    assert reduction > 0.5  # this covariate explains most of the outcome


def test_a_constant_covariate_leaves_the_arms_unadjusted() -> None:
    rng = np.random.default_rng(8)
    post_a, post_b = rng.normal(3, 1, 100), rng.normal(3, 1, 100)
    ones = np.ones(100)
    adjustment = cuped_adjust([_summaries(post_a, ones), _summaries(post_b, ones)])
    assert adjustment.theta == 0.0
    for arm, post in zip(adjustment.arms, (post_a, post_b), strict=True):
        assert arm.mean == pytest.approx(post.mean(), rel=1e-12)
        assert arm.variance == pytest.approx(post.var(ddof=1), rel=1e-9)
