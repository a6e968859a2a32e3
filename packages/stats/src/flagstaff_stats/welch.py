"""Welch's t-test, two-sided, fixed horizon: valid when the sample size was fixed in advance and
the result is read once.

t = Δ/√Var(Δ),  p = 2·(1 − F_ν(|t|)),  CI = Δ ± F_ν⁻¹(1 − α/2)·√Var(Δ)
with F_ν Student's t with the Welch–Satterthwaite degrees of freedom ν of the `Difference`
(Welch 1947; the absolute form is scipy's `ttest_ind(equal_var=False)`; the relative form, t on
the delta-method variance, is GrowthBook gbstats 0.8.0 `TwoSidedTTest`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flagstaff_stats.difference import Difference
from flagstaff_stats.distribution import student_t_quantile, student_t_sf
from flagstaff_stats.interval import Interval
from flagstaff_stats.significance import ALPHA, check_alpha


@dataclass(frozen=True, slots=True, kw_only=True)
class WelchResult:
    """The estimate, its standard error, t, ν, the two-sided p-value and the (1 − α) interval."""

    estimate: float
    std_error: float
    statistic: float
    degrees_of_freedom: float
    p_value: float
    interval: Interval


def welch_test(difference: Difference, *, alpha: float = ALPHA) -> WelchResult:
    """The two-sided Welch t-test of `difference` against 0."""
    check_alpha(alpha)
    std_error = math.sqrt(difference.variance)
    statistic = difference.estimate / std_error
    dof = difference.degrees_of_freedom
    p_value = min(1.0, 2.0 * student_t_sf(abs(statistic), dof))
    half_width = student_t_quantile(1.0 - alpha / 2.0, dof) * std_error
    return WelchResult(
        estimate=difference.estimate,
        std_error=std_error,
        statistic=statistic,
        degrees_of_freedom=dof,
        p_value=p_value,
        interval=Interval(
            lower=difference.estimate - half_width, upper=difference.estimate + half_width
        ),
    )
