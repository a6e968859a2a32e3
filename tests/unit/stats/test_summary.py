"""Sufficient statistics: moments agree with numpy's, impossible summaries are refused."""

from __future__ import annotations

import numpy as np
import pytest
from flagstaff_stats import CovariateSummary, InvalidSummary, Summary
from stats_data import numeric_pairs, summary


@pytest.mark.parametrize("name", list(numeric_pairs()))
def test_summary_moments_match_numpy(name: str) -> None:
    for values in numeric_pairs()[name]:
        s = summary(values)
        assert s.mean == pytest.approx(values.mean(), rel=1e-12)
        assert s.variance == pytest.approx(values.var(ddof=1), rel=1e-9)
        assert s.std_dev == pytest.approx(values.std(ddof=1), rel=1e-9)


def test_merging_summaries_is_the_summary_of_all_units() -> None:
    a, b = numeric_pairs()["lognormal revenue"]
    merged = summary(a).merged(summary(b))
    whole = summary(np.concatenate([a, b]))
    assert merged.n == whole.n
    assert merged.sum == pytest.approx(whole.sum, rel=1e-12)
    assert merged.variance == pytest.approx(whole.variance, rel=1e-9)


def test_conversions_are_zero_one_values() -> None:
    s = Summary.of_conversions(units=10, converted=3)
    assert (s.n, s.sum, s.sum_squares) == (10, 3.0, 3.0)
    assert s.variance == pytest.approx(np.var([1.0] * 3 + [0.0] * 7, ddof=1))


@pytest.mark.parametrize(
    ("n", "total", "squares", "message"),
    [
        (-1, 0.0, 0.0, "non-negative integer"),
        (2.0, 1.0, 1.0, "non-negative integer"),
        (0, 1.0, 1.0, "no units"),
        (3, float("nan"), 1.0, "finite"),
        (2, 10.0, 1.0, "below sum²/n"),
        (2, 0.0, -1.0, "negative"),
    ],
)
def test_impossible_summaries_are_refused(
    n: int, total: float, squares: float, message: str
) -> None:
    with pytest.raises(InvalidSummary, match=message):
        Summary(n=n, sum=total, sum_squares=squares)


def test_conversions_beyond_units_are_refused() -> None:
    with pytest.raises(InvalidSummary, match="between 0 and units"):
        Summary.of_conversions(units=5, converted=6)


def test_covariate_summary_refuses_a_cross_sum_no_data_allows() -> None:
    pairs = [(1.0, 2.0), (2.0, 1.0), (3.0, 5.0)]
    honest = CovariateSummary.of_pairs(pairs)
    assert honest.covariance == pytest.approx(np.cov([1, 2, 3], [2, 1, 5])[0, 1])
    with pytest.raises(InvalidSummary, match="cross_sum"):
        CovariateSummary(post=honest.post, pre=honest.pre, cross_sum=honest.cross_sum + 100.0)
    with pytest.raises(InvalidSummary, match="same units"):
        CovariateSummary(post=honest.post, pre=Summary.of_values([1.0]), cross_sum=1.0)


def test_numpy_integers_are_counts_too() -> None:
    # Aggregation through numpy or pandas hands over np.int64 counts.
    s = Summary(n=np.int64(4), sum=np.float64(6.0), sum_squares=np.float64(14.0))
    assert s.n == 4
    assert type(s.n) is int
    c = Summary.of_conversions(units=np.int64(10), converted=np.int64(3))
    assert (c.n, c.sum) == (10, 3.0)
