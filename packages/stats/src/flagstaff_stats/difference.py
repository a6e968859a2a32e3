"""A treatment's difference from the baseline, with the variance of that estimate: the one input
of every test (`welch`, `sequential`, `bayesian`).

absolute Δ = μB − μA,             Var = σB²/nB + σA²/nA
relative Δ = (μB − μA)/μA*,       Var ≈ σB²/(μA*²·nB) + σA²·μB*²/(μA*⁴·nA)   (delta method)
where μ are the (possibly CUPED-adjusted) means, σ² the per-unit variances of what they average
and μ* the unadjusted means (GrowthBook gbstats 0.8.0, `frequentist/tests.py`; the delta method
for a ratio of independent means, e.g. Casella & Berger, Statistical Inference, §5.5.4).
Degrees of freedom are Welch–Satterthwaite's (Welch 1947):
ν = (σA²/nA + σB²/nB)² / ((σA²/nA)²/(nA − 1) + (σB²/nB)²/(nB − 1)).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from flagstaff_stats.summary import Summary


class DifferenceKind(enum.Enum):
    """The difference of means in the metric's unit, or that difference relative to the baseline."""

    ABSOLUTE = "absolute"
    RELATIVE = "relative"


class Shortfall(enum.Enum):
    """Why a comparison has no estimate (returned, not raised: thin data is a normal state)."""

    TOO_FEW_UNITS = "tooFewUnits"  # an arm has fewer than two units: no variance to speak of
    ZERO_BASELINE = "zeroBaseline"  # a relative difference against a baseline mean of 0
    ZERO_VARIANCE = "zeroVariance"  # both arms constant: the estimate has no spread to test


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmEstimate:
    """What a test needs of one arm: its units, the mean it compares (CUPED-adjusted or not), the
    per-unit variance behind that mean, and the unadjusted mean (the relative denominator)."""

    n: int
    mean: float
    variance: float
    unadjusted_mean: float

    @classmethod
    def of(cls, summary: Summary) -> ArmEstimate:
        """An arm without covariate adjustment."""
        return cls(
            n=summary.n,
            mean=summary.mean,
            variance=summary.variance,
            unadjusted_mean=summary.mean,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Difference:
    """An estimate of treatment − baseline (or its ratio to the baseline) with its variance."""

    kind: DifferenceKind
    estimate: float
    variance: float
    degrees_of_freedom: float
    units: int  # nA + nB: the sample size the sequential test's boundary grows with


def difference(
    baseline: ArmEstimate, treatment: ArmEstimate, kind: DifferenceKind
) -> Difference | Shortfall:
    """The treatment's difference from the baseline, or why there is none."""
    if baseline.n < 2 or treatment.n < 2:
        return Shortfall.TOO_FEW_UNITS
    share_a = baseline.variance / baseline.n
    share_b = treatment.variance / treatment.n
    if share_a + share_b <= 0:
        return Shortfall.ZERO_VARIANCE
    dof = (share_a + share_b) ** 2 / (
        share_a**2 / (baseline.n - 1) + share_b**2 / (treatment.n - 1)
    )
    units = baseline.n + treatment.n
    absolute = treatment.mean - baseline.mean
    if kind is DifferenceKind.ABSOLUTE:
        return Difference(
            kind=kind,
            estimate=absolute,
            variance=share_a + share_b,
            degrees_of_freedom=dof,
            units=units,
        )
    mu_a = baseline.unadjusted_mean
    if mu_a == 0:
        return Shortfall.ZERO_BASELINE
    mu_b = treatment.unadjusted_mean
    variance = share_b / mu_a**2 + share_a * mu_b**2 / mu_a**4
    if variance <= 0:  # a constant treatment at 0 against a varying baseline: −100 % exactly
        return Shortfall.ZERO_VARIANCE
    return Difference(
        kind=kind,
        estimate=absolute / mu_a,
        variance=variance,
        degrees_of_freedom=dof,
        units=units,
    )
