"""Holm, Benjamini–Hochberg and Bonferroni against statsmodels' `multipletests`."""

from __future__ import annotations

import numpy as np
import pytest
from flagstaff_stats import Correction, InvalidSetting, adjust_p_values
from statsmodels.stats.multitest import multipletests

FAMILIES = {
    "mixed": [0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.049],
    "ties": [0.02, 0.02, 0.02, 0.5, 0.001, 0.001],
    "all large": [0.6, 0.9, 0.7, 1.0],
    "one": [0.03],
    "random": np.random.default_rng(41).uniform(0, 0.2, 40).tolist(),
    "extremes": [0.0, 1.0, 1e-300, 0.999999],
}
METHODS = {
    Correction.HOLM: "holm",
    Correction.BENJAMINI_HOCHBERG: "fdr_bh",
    Correction.BONFERRONI: "bonferroni",
}


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("method", list(METHODS))
def test_adjusted_p_values_match_statsmodels(family: str, method: Correction) -> None:
    p_values = FAMILIES[family]
    _, reference, _, _ = multipletests(p_values, alpha=0.05, method=METHODS[method])
    ours = adjust_p_values(p_values, method)
    assert list(ours) == pytest.approx(list(reference), rel=1e-12, abs=1e-300)


def test_no_correction_returns_the_p_values() -> None:
    assert adjust_p_values([0.2, 0.01], Correction.NONE) == (0.2, 0.01)
    assert adjust_p_values([], Correction.HOLM) == ()


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_p_values_outside_zero_one_are_refused(bad: float) -> None:
    with pytest.raises(InvalidSetting, match="p-value"):
        adjust_p_values([0.1, bad], Correction.HOLM)
