"""Sample-ratio mismatch against scipy's chi-squared goodness of fit."""

from __future__ import annotations

import pytest
from flagstaff_stats import InvalidSetting, sample_ratio_test
from scipy import stats


@pytest.mark.parametrize(
    ("units", "weights"),
    [
        ([5000, 5000], [50, 50]),
        ([5120, 4880], [50, 50]),
        ([5300, 4700], [1, 1]),
        ([1010, 2050, 6940], [10, 20, 70]),
        ([333, 340, 327, 900], [25000, 25000, 25000, 75000]),
        ([7, 1], [0.5, 0.5]),
    ],
)
def test_sample_ratio_matches_scipy_chisquare(units: list[int], weights: list[float]) -> None:
    total = sum(units)
    expected = [w / sum(weights) * total for w in weights]
    reference = stats.chisquare(units, expected)
    ours = sample_ratio_test(units, weights)
    assert ours.chi_squared == pytest.approx(reference.statistic, rel=1e-12, abs=1e-12)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert ours.degrees_of_freedom == len(units) - 1
    assert ours.probability_of_mismatch == pytest.approx(1 - reference.pvalue, rel=1e-9)
    assert ours.mismatch == (reference.pvalue < 0.001)


def test_a_lopsided_split_is_flagged_and_a_fair_one_is_not() -> None:
    assert sample_ratio_test([5300, 4700], [50, 50]).mismatch
    assert not sample_ratio_test([5030, 4970], [50, 50]).mismatch
    assert sample_ratio_test([5030, 4970], [50, 50], threshold=0.6).mismatch


def test_arms_planned_at_zero_are_left_out_and_units_there_are_a_mismatch() -> None:
    quiet = sample_ratio_test([4980, 5020, 0], [50, 50, 0])
    reference = stats.chisquare([4980, 5020], [5000, 5000])
    assert quiet.degrees_of_freedom == 1
    assert quiet.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    stray = sample_ratio_test([4980, 5020, 3], [50, 50, 0])
    assert stray.mismatch
    assert stray.p_value == 0.0


def test_no_units_yet_is_no_mismatch() -> None:
    empty = sample_ratio_test([0, 0], [50, 50])
    assert (empty.p_value, empty.mismatch) == (1.0, False)


@pytest.mark.parametrize(
    ("units", "weights", "threshold"),
    [
        ([1, 2], [1], 0.001),
        ([1, 2], [0, 0], 0.001),
        ([1, 2], [1, -1], 0.001),
        ([-1, 2], [1, 1], 0.001),
        ([1, 2], [1, 1], 0.0),
    ],
)
def test_bad_arguments_are_refused(
    units: list[int], weights: list[float], threshold: float
) -> None:
    with pytest.raises(InvalidSetting):
        sample_ratio_test(units, weights, threshold=threshold)
