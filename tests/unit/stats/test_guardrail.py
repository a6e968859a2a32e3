"""A guardrail look: regressed only when the whole always-valid interval is past the tolerated
regression on the bad side; too few units hold (INSUFFICIENT), never pass."""

from __future__ import annotations

import numpy as np
import pytest
from flagstaff_stats import (
    GuardrailStatus,
    InvalidSetting,
    Shortfall,
    SuccessCriterion,
    Summary,
    check_guardrail,
)
from stats_data import summary

HIGHER = SuccessCriterion.HIGHER_THAN_BASELINE
LOWER = SuccessCriterion.LOWER_THAN_BASELINE


def _latency(seed: int, n: int, slowdown: float) -> tuple[Summary, Summary]:
    rng = np.random.default_rng(seed)
    return summary(rng.gamma(4.0, 50.0, n)), summary(rng.gamma(4.0, 50.0 * (1 + slowdown), n))


def test_a_clear_slowdown_is_a_regression() -> None:
    original, new = _latency(1, 4000, 0.10)
    check = check_guardrail(original, new, criterion=LOWER)
    assert check.status is GuardrailStatus.REGRESSED
    assert check.test is not None
    assert check.test.interval.lower > 0  # slower, surely


def test_no_change_is_ok() -> None:
    original, new = _latency(2, 4000, 0.0)
    assert check_guardrail(original, new, criterion=LOWER).status is GuardrailStatus.OK


def test_a_drop_in_a_higher_is_better_metric_is_a_regression() -> None:
    rng = np.random.default_rng(3)
    original = Summary.of_conversions(units=20_000, converted=int((rng.random(20_000) < 0.2).sum()))
    new = Summary.of_conversions(units=20_000, converted=int((rng.random(20_000) < 0.17).sum()))
    assert check_guardrail(original, new, criterion=HIGHER).status is GuardrailStatus.REGRESSED
    assert check_guardrail(new, original, criterion=HIGHER).status is GuardrailStatus.OK


def test_a_regression_within_the_tolerance_is_ok() -> None:
    original, new = _latency(4, 20_000, 0.05)
    assert check_guardrail(original, new, criterion=LOWER).status is GuardrailStatus.REGRESSED
    tolerant = check_guardrail(original, new, criterion=LOWER, tolerance=0.10)
    assert tolerant.status is GuardrailStatus.OK
    assert tolerant.threshold == pytest.approx(0.10 * original.mean)


def test_too_few_units_hold_whatever_the_data_say() -> None:
    original, new = _latency(5, 60, 2.0)
    check = check_guardrail(original, new, criterion=LOWER, minimum_units=100)
    assert check.status is GuardrailStatus.INSUFFICIENT
    assert check.test is None
    assert check_guardrail(original, new, criterion=LOWER, minimum_units=50).status is (
        GuardrailStatus.REGRESSED
    )


def test_constant_telemetry_holds() -> None:
    zeros = Summary.of_conversions(units=500, converted=0)
    check = check_guardrail(zeros, zeros, criterion=LOWER)
    assert check.status is GuardrailStatus.INSUFFICIENT
    assert check.shortfall is Shortfall.ZERO_VARIANCE


@pytest.mark.parametrize(("tolerance", "minimum"), [(-0.1, 100), (float("nan"), 100), (0.0, 1)])
def test_bad_settings_are_refused(tolerance: float, minimum: int) -> None:
    original, new = _latency(6, 200, 0.0)
    with pytest.raises(InvalidSetting):
        check_guardrail(original, new, criterion=LOWER, tolerance=tolerance, minimum_units=minimum)
