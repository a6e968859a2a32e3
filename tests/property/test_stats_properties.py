"""Properties of the statistics engine (Hypothesis): swapping treatment and control negates the
difference and keeps every p-value; scaling the metric leaves p-values and chances unchanged;
corrections never lower a p-value and keep their order; SRM ignores the order of the arms."""

from __future__ import annotations

import math
import random

import pytest
from flagstaff_stats import (
    ArmEstimate,
    Correction,
    Difference,
    DifferenceKind,
    Summary,
    adjust_p_values,
    bayesian_test,
    difference,
    sample_ratio_test,
    sequential_test,
    welch_test,
)
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import note_inputs

values = st.lists(
    st.floats(min_value=-1000, max_value=1000, allow_nan=False).map(lambda v: round(v, 3)),
    min_size=2,
    max_size=40,
)
positive_values = st.lists(
    st.floats(min_value=0.01, max_value=1000, allow_nan=False).map(lambda v: round(v, 3)),
    min_size=2,
    max_size=40,
)
scales = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
p_values = st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), max_size=30)


def _estimate(xs: list[float]) -> ArmEstimate:
    return ArmEstimate.of(Summary.of_values(xs))


def _tested(a: list[float], b: list[float], kind: DifferenceKind) -> Difference:
    found = difference(_estimate(a), _estimate(b), kind)
    assume(isinstance(found, Difference))
    assert isinstance(found, Difference)
    # Near-constant arms put the variance at the mercy of rounding: keep to honest spreads.
    assume(found.variance > 1e-9 * max(1.0, found.estimate**2))
    return found


@given(values, values)
def test_swapping_arms_negates_the_absolute_difference_and_keeps_p_values(
    a: list[float], b: list[float]
) -> None:
    note_inputs(a=a, b=b)
    forward = _tested(a, b, DifferenceKind.ABSOLUTE)
    backward = _tested(b, a, DifferenceKind.ABSOLUTE)
    assert backward.estimate == pytest.approx(-forward.estimate, rel=1e-9, abs=1e-9)
    assert backward.variance == pytest.approx(forward.variance, rel=1e-12)
    assert welch_test(backward).p_value == pytest.approx(welch_test(forward).p_value, rel=1e-9)
    assert sequential_test(backward).p_value == pytest.approx(
        sequential_test(forward).p_value, rel=1e-9
    )
    assert bayesian_test(backward).chance_to_win == pytest.approx(
        1 - bayesian_test(forward).chance_to_win, abs=1e-9
    )


@given(positive_values, positive_values)
def test_swapping_arms_turns_a_relative_lift_r_into_minus_r_over_one_plus_r(
    a: list[float], b: list[float]
) -> None:
    note_inputs(a=a, b=b)
    forward = _tested(a, b, DifferenceKind.RELATIVE).estimate
    backward = _tested(b, a, DifferenceKind.RELATIVE).estimate
    assert backward == pytest.approx(-forward / (1 + forward), rel=1e-9, abs=1e-12)
    assert math.copysign(1, backward) == -math.copysign(1, forward) or forward == 0


@given(positive_values, positive_values, scales, st.sampled_from(list(DifferenceKind)))
def test_scaling_the_metric_leaves_p_values_and_chances_unchanged(
    a: list[float], b: list[float], scale: float, kind: DifferenceKind
) -> None:
    note_inputs(a=a, b=b, scale=scale)
    plain = _tested(a, b, kind)
    scaled = _tested([scale * v for v in a], [scale * v for v in b], kind)
    factor = scale if kind is DifferenceKind.ABSOLUTE else 1.0
    assert scaled.estimate == pytest.approx(factor * plain.estimate, rel=1e-6, abs=1e-9 * factor)
    for p, q in (
        (welch_test(plain).p_value, welch_test(scaled).p_value),
        (sequential_test(plain).p_value, sequential_test(scaled).p_value),
        (bayesian_test(plain).chance_to_win, bayesian_test(scaled).chance_to_win),
    ):
        assert q == pytest.approx(p, rel=1e-6, abs=1e-12)


@given(p_values, st.sampled_from([c for c in Correction if c is not Correction.NONE]))
def test_corrections_never_lower_a_p_value_and_keep_the_order(
    ps: list[float], method: Correction
) -> None:
    adjusted = adjust_p_values(ps, method)
    assert len(adjusted) == len(ps)
    for raw, adj in zip(ps, adjusted, strict=True):
        assert raw <= adj <= 1.0
    for i in range(len(ps)):
        for j in range(len(ps)):
            if ps[i] < ps[j]:
                assert adjusted[i] <= adjusted[j]


@given(
    st.lists(
        st.tuples(st.integers(0, 10_000), st.floats(min_value=0.1, max_value=100)),
        min_size=2,
        max_size=6,
    ),
    st.randoms(use_true_random=False),
)
def test_srm_ignores_the_order_of_the_arms(
    arms: list[tuple[int, float]], rng: random.Random
) -> None:
    units, weights = [u for u, _ in arms], [w for _, w in arms]
    shuffled = list(arms)
    rng.shuffle(shuffled)
    first = sample_ratio_test(units, weights)
    second = sample_ratio_test([u for u, _ in shuffled], [w for _, w in shuffled])
    assert 0.0 <= first.p_value <= 1.0
    assert second.p_value == pytest.approx(first.p_value, rel=1e-9, abs=1e-300)
