"""A/A: 2,000 simulated experiments with no true difference, analysed in process through
`compare` (and `check_guardrail`) at ten looks each. A test that controls its error rate
rejects in at most α of them, up to Monte Carlo error: the fixed-horizon test read once at the
end, the sequential test read at every look, and a guardrail checked at every look. The fixed
test read at every look is the control: peeking inflates its error, and the simulation sees it.
Seeded: every run draws the same experiments."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from flagstaff_stats import (
    ArmEstimate,
    GuardrailStatus,
    SuccessCriterion,
    Summary,
    check_guardrail,
    compare,
)

EXPERIMENTS = 2000
LOOKS = 10
UNITS_PER_LOOK = 200  # per arm: 200, 400, ..., 2,000 units per arm at the ten looks
ALPHA = 0.05
# 2.58 Monte Carlo standard errors of a rejection rate near α over EXPERIMENTS runs.
MONTE_CARLO_ERROR = 2.58 * math.sqrt(ALPHA * (1 - ALPHA) / EXPERIMENTS)

Draw = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]


@dataclass(frozen=True)
class Rates:
    fixed_once: float
    fixed_peeking: float
    sequential_peeking: float
    guardrail_peeking: float


def _simulate(draw: Draw, seed: int) -> Rates:
    rng = np.random.default_rng(seed)
    size = (EXPERIMENTS, LOOKS * UNITS_PER_LOOK)
    looks = np.arange(1, LOOKS + 1) * UNITS_PER_LOOK - 1
    draws = (draw(rng, size), draw(rng, size))
    arms = [(np.cumsum(v, axis=1)[:, looks], np.cumsum(v**2, axis=1)[:, looks]) for v in draws]
    fixed_once = fixed_peeking = sequential_peeking = guardrail_peeking = 0
    for e in range(EXPERIMENTS):
        fixed_hit = sequential_hit = guardrail_hit = False
        for look in range(LOOKS):
            n = (look + 1) * UNITS_PER_LOOK
            baseline, treatment = (
                Summary(n=n, sum=float(sums[e, look]), sum_squares=float(squares[e, look]))
                for sums, squares in arms
            )
            comparison = compare(ArmEstimate.of(baseline), ArmEstimate.of(treatment))
            assert comparison.welch is not None
            assert comparison.sequential is not None
            fixed_hit |= comparison.welch.p_value < ALPHA
            sequential_hit |= comparison.sequential.p_value < ALPHA
            guard = check_guardrail(
                baseline, treatment, criterion=SuccessCriterion.LOWER_THAN_BASELINE, alpha=ALPHA
            )
            guardrail_hit |= guard.status is GuardrailStatus.REGRESSED
            if look == LOOKS - 1:
                fixed_once += comparison.welch.p_value < ALPHA
        fixed_peeking += fixed_hit
        sequential_peeking += sequential_hit
        guardrail_peeking += guardrail_hit
    return Rates(
        fixed_once=fixed_once / EXPERIMENTS,
        fixed_peeking=fixed_peeking / EXPERIMENTS,
        sequential_peeking=sequential_peeking / EXPERIMENTS,
        guardrail_peeking=guardrail_peeking / EXPERIMENTS,
    )


METRICS: dict[str, Draw] = {
    "conversion at 10 %": lambda rng, size: (rng.random(size) < 0.10).astype(float),
    "skewed revenue (exponential)": lambda rng, size: rng.exponential(25.0, size),
}


@pytest.mark.parametrize("metric", list(METRICS))
def test_aa_false_positive_rates_stay_at_alpha(metric: str) -> None:
    rates = _simulate(METRICS[metric], seed=1701)
    bound = ALPHA + MONTE_CARLO_ERROR
    assert rates.fixed_once <= bound, rates
    assert rates.fixed_once >= ALPHA - MONTE_CARLO_ERROR, rates  # calibrated, not just timid
    assert rates.sequential_peeking <= bound, rates
    assert rates.guardrail_peeking <= bound, rates
    assert rates.fixed_peeking > bound, rates  # peeking at a fixed-horizon test does inflate it
