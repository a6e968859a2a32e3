"""The always-valid confidence sequence: its p-value is the normal-mixture likelihood ratio
(integrated numerically here), it agrees with its interval, and ρ is tuned for N = τ."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flagstaff_stats import (
    ArmEstimate,
    Difference,
    DifferenceKind,
    InvalidSetting,
    difference,
    sequential_test,
    welch_test,
)
from flagstaff_stats.sequential import mixing_variance
from scipy import integrate, optimize
from stats_data import numeric_pairs, summary

CASES = [(name, kind) for name in numeric_pairs() for kind in DifferenceKind]


def _difference(name: str, kind: DifferenceKind) -> Difference:
    a, b = numeric_pairs()[name]
    found = difference(ArmEstimate.of(summary(a)), ArmEstimate.of(summary(b)), kind)
    assert isinstance(found, Difference)
    return found


def _mixture_likelihood_ratio(d: Difference, rho2: float) -> float:
    """Robbins' normal mixture ∫ exp(λS − λ²N/2) dN(0, ρ²)(λ) with S = N·Δ/s, s² = N·Var(Δ):
    the e-value the closed form stands for, integrated by quadrature."""
    n = d.units
    total = n * d.estimate / math.sqrt(n * d.variance)
    precision = n + 1 / rho2  # the integrand is a Gaussian bump in λ: integrate around it
    mode, reach = total / precision, 40 / math.sqrt(precision)

    def integrand(lam: float) -> float:
        log_prior = -lam * lam / (2 * rho2) - 0.5 * math.log(2 * math.pi * rho2)
        return math.exp(lam * total - lam * lam * n / 2 + log_prior)

    value, _ = integrate.quad(integrand, mode - reach, mode + reach, epsrel=1e-11, limit=200)
    return value


@pytest.mark.parametrize(("name", "kind"), CASES)
@pytest.mark.parametrize("tuning", [5000.0, 200.0])
def test_p_value_is_one_over_the_mixture_likelihood_ratio(
    name: str, kind: DifferenceKind, tuning: float
) -> None:
    d = _difference(name, kind)
    result = sequential_test(d, alpha=0.05, tuning=tuning)
    ratio = _mixture_likelihood_ratio(d, result.mixing_variance)
    assert result.p_value == pytest.approx(min(1.0, 1.0 / ratio), rel=1e-6)


@pytest.mark.parametrize(("name", "kind"), CASES)
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_p_value_is_below_alpha_exactly_when_the_sequence_excludes_zero(
    name: str, kind: DifferenceKind, alpha: float
) -> None:
    result = sequential_test(_difference(name, kind), alpha=alpha, tuning=500.0)
    assert (result.p_value < alpha) == (not result.interval.contains(0.0))
    # An estimate as large as the sequence's half-width sits on its edge: p = α there.
    d = _difference(name, kind)
    width = result.interval.upper - d.estimate
    edge = Difference(
        kind=d.kind,
        estimate=width,
        variance=d.variance,
        degrees_of_freedom=d.degrees_of_freedom,
        units=d.units,
    )
    assert sequential_test(edge, alpha=alpha, tuning=500.0).p_value == pytest.approx(
        alpha, rel=1e-9
    )


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_sequence_is_wider_than_the_fixed_horizon_interval(name: str, kind: DifferenceKind) -> None:
    d = _difference(name, kind)
    sequential = sequential_test(d)
    fixed = welch_test(d)
    assert sequential.interval.lower < fixed.interval.lower
    assert sequential.interval.upper > fixed.interval.upper


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1])
@pytest.mark.parametrize("tuning", [100.0, 5000.0, 1e6])
def test_mixing_variance_makes_the_sequence_tightest_near_tuning(
    alpha: float, tuning: float
) -> None:
    def squared_width(log_rho: float) -> float:
        r2 = math.exp(2 * log_rho)
        spread = tuning * r2 + 1
        return 2 * spread / (tuning * tuning * r2) * math.log(math.sqrt(spread) / alpha)

    best = optimize.minimize_scalar(squared_width, bounds=(-20, 5), method="bounded")
    ours = squared_width(0.5 * math.log(mixing_variance(alpha=alpha, tuning=tuning)))
    assert ours <= best.fun * 1.001


def test_sequence_narrows_as_units_accumulate() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, 20_000), rng.normal(0, 1, 20_000)
    widths = []
    for n in (100, 1000, 5000, 20_000):
        found = difference(
            ArmEstimate.of(summary(a[:n])), ArmEstimate.of(summary(b[:n])), DifferenceKind.ABSOLUTE
        )
        assert isinstance(found, Difference)
        interval = sequential_test(found).interval
        widths.append(interval.upper - interval.lower)
    assert widths == sorted(widths, reverse=True)


@pytest.mark.parametrize("tuning", [0.0, -5.0, float("inf"), float("nan")])
def test_tuning_must_be_positive_and_finite(tuning: float) -> None:
    with pytest.raises(InvalidSetting, match="tuning"):
        sequential_test(_difference("tiny", DifferenceKind.ABSOLUTE), tuning=tuning)


@pytest.mark.parametrize(("units", "ratio"), [(5000, 1.5486), (500, 1.9669), (100_000, 1.7025)])
def test_the_price_of_peeking_is_the_documented_width_ratio(units: int, ratio: float) -> None:
    # docs/experiments.md: 1.55 times the fixed-horizon width at N = τ, 1.97 at τ/10, 1.70 at 20τ.
    d = Difference(
        kind=DifferenceKind.ABSOLUTE,
        estimate=0.0,
        variance=1.0,
        degrees_of_freedom=math.inf,
        units=units,
    )
    assert sequential_test(d).interval.upper / welch_test(d).interval.upper == pytest.approx(
        ratio, abs=1e-4
    )
