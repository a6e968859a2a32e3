"""A metric analysed end to end and its LaunchDarkly results representation: every field named
in docs/experiments.md and no other, nulls where a number cannot exist, the methods' numbers
passed through unchanged, corrections across metrics, and a true lift found with its sign."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from flagstaff_stats import (
    AnalysisSettings,
    ArmData,
    ArmEstimate,
    Correction,
    CovariateSummary,
    Difference,
    DifferenceKind,
    InvalidSetting,
    InvalidSummary,
    MetricKind,
    SuccessCriterion,
    Summary,
    adjust_p_values,
    analyze_metric,
    correct,
    difference,
    results_representation,
    welch_test,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "experiments.md"


def _documented_treatment_fields() -> set[str]:
    text = DOC.read_text()
    table = text[text.index("| field | from | definition |") :].split("\n\n")[0]
    return set(re.findall(r"^\| `(\w+)` \| [LF] \|", table, flags=re.MULTILINE))


def _conversion_arms(counts: list[tuple[int, int]]) -> list[ArmData]:
    return [
        ArmData(
            treatment_id=f"v{i}",
            name=f"Variation {i}",
            allocation=100 / len(counts),
            summary=Summary.of_conversions(units=n, converted=c),
        )
        for i, (c, n) in enumerate(counts)
    ]


def test_representation_has_exactly_the_documented_fields() -> None:
    analysis = analyze_metric(
        _conversion_arms([(500, 5000), (560, 5000), (480, 5000)]),
        baseline_id="v0",
        kind=MetricKind.CONVERSION,
    )
    body = results_representation(analysis)
    json.dumps(body, allow_nan=False)
    assert set(body) == {
        "treatmentResults",
        "probabilityOfMismatch",
        "sampleRatioMismatch",
        "analysis",
    }
    documented = _documented_treatment_fields()
    assert len(documented) > 25
    for entry in body["treatmentResults"]:
        assert set(entry) == documented


def test_baseline_has_no_comparison_and_treatments_carry_the_methods_numbers() -> None:
    arms = _conversion_arms([(500, 5000), (560, 5000)])
    analysis = analyze_metric(arms, baseline_id="v0", kind=MetricKind.CONVERSION)
    baseline, treatment = results_representation(analysis)["treatmentResults"]
    assert baseline["baseline"] is True
    for field in ("pValue", "confidenceInterval", "sequentialPValue", "probabilityToBeatBaseline"):
        assert baseline[field] is None
    assert baseline["relativeDifferences"] == []
    direct = difference(
        ArmEstimate.of(arms[0].outcome), ArmEstimate.of(arms[1].outcome), DifferenceKind.RELATIVE
    )
    assert isinstance(direct, Difference)
    reference = welch_test(direct)
    assert treatment["pValue"] == reference.p_value
    assert treatment["confidenceInterval"] == {
        "lower": reference.interval.lower,
        "upper": reference.interval.upper,
    }
    assert treatment["difference"] == pytest.approx(0.12)
    assert treatment["dataMean"] == pytest.approx(0.112)
    assert treatment["units"] == treatment["traffic"] == 5000
    assert treatment["distribution"] == {
        "kind": "beta",
        "parameters": {"alpha": 561.0, "beta": 4441.0},
    }
    assert baseline["pBest"] + treatment["pBest"] == pytest.approx(1.0)
    assert treatment["relativeDifferences"][0]["fromTreatmentId"] == "v0"


def test_a_true_lift_is_found_with_its_sign() -> None:
    rng = np.random.default_rng(99)
    control, better = rng.exponential(10.0, 20_000), rng.exponential(10.5, 20_000)
    arms = [
        ArmData(treatment_id=t, name=t, allocation=50, summary=Summary.of_values(v.tolist()))
        for t, v in (("old", control), ("new", better))
    ]
    body = results_representation(analyze_metric(arms, baseline_id="old", kind=MetricKind.NUMERIC))
    new = body["treatmentResults"][1]
    assert new["difference"] > 0
    assert new["pValue"] < 0.05
    assert new["confidenceInterval"]["lower"] > 0
    assert new["probabilityToBeatBaseline"] > 0.95
    assert new["pBest"] > 0.95
    lower_is_better = analyze_metric(
        arms,
        baseline_id="old",
        kind=MetricKind.NUMERIC,
        criterion=SuccessCriterion.LOWER_THAN_BASELINE,
    )
    assert lower_is_better.arms[1].p_best < 0.05


def test_cuped_fields_appear_with_a_covariate_on_every_arm() -> None:
    rng = np.random.default_rng(12)
    arms = []
    for t in ("a", "b"):
        pre = rng.gamma(2.0, 10.0, 3000)
        post = 0.8 * pre + rng.normal(0, 5, 3000)
        pairs = list(zip(post.tolist(), pre.tolist(), strict=True))
        arms.append(
            ArmData(treatment_id=t, name=t, allocation=1, summary=CovariateSummary.of_pairs(pairs))
        )
    analysis = analyze_metric(arms, baseline_id="a", kind=MetricKind.NUMERIC)
    body = results_representation(analysis)
    treatment = body["treatmentResults"][1]
    assert body["analysis"]["covariateAdjusted"] is True
    assert treatment["varianceReduction"] > 0.5
    assert (
        treatment["relativeDifferences"][0]["varianceReduction"] == treatment["varianceReduction"]
    )
    assert abs(treatment["covariateImbalance"]) < 0.1
    assert treatment["adjustedMean"] is not None
    unadjusted = analyze_metric(
        arms,
        baseline_id="a",
        kind=MetricKind.NUMERIC,
        settings=AnalysisSettings(use_covariate=False),
    )
    assert results_representation(unadjusted)["treatmentResults"][1]["varianceReduction"] is None


def test_a_lopsided_split_is_reported_as_a_mismatch() -> None:
    analysis = analyze_metric(
        _conversion_arms([(500, 5400), (520, 4600)]), baseline_id="v0", kind=MetricKind.CONVERSION
    )
    body = results_representation(analysis)
    assert body["sampleRatioMismatch"]["detected"] is True
    assert body["probabilityOfMismatch"] > 0.999


def test_thin_and_zero_baseline_data_give_nulls_and_a_reason() -> None:
    thin = analyze_metric(
        _conversion_arms([(0, 1), (3, 40)]), baseline_id="v0", kind=MetricKind.CONVERSION
    )
    entry = results_representation(thin)["treatmentResults"][1]
    assert entry["shortfall"] == "tooFewUnits"
    assert entry["pValue"] is None
    assert entry["pBest"] is None
    zero = analyze_metric(
        _conversion_arms([(0, 400), (9, 400)]),
        baseline_id="v0",
        kind=MetricKind.CONVERSION,
        settings=AnalysisSettings(difference_kind=DifferenceKind.ABSOLUTE),
    )
    entry = results_representation(zero)["treatmentResults"][1]
    assert entry["shortfall"] == "zeroBaseline"
    assert entry["pValue"] is not None  # the absolute test needs no baseline mean
    assert entry["relativeDifferences"] == []


def test_correct_adjusts_every_treatment_of_every_metric_as_one_family() -> None:
    first = analyze_metric(
        _conversion_arms([(500, 5000), (560, 5000), (505, 5000)]),
        baseline_id="v0",
        kind=MetricKind.CONVERSION,
    )
    second = analyze_metric(
        _conversion_arms([(100, 2000), (130, 2000), (90, 2000)]),
        baseline_id="v0",
        kind=MetricKind.CONVERSION,
    )
    raw = [
        arm.comparison.welch.p_value for m in (first, second) for arm in m.arms if arm.comparison
    ]
    expected = adjust_p_values(raw, Correction.HOLM)
    corrected = correct([first, second], Correction.HOLM)
    found = [arm.comparison.adjusted_p_value for m in corrected for arm in m.arms if arm.comparison]
    assert found == list(expected)
    assert results_representation(corrected[0])["analysis"]["correction"] == "holm"


def test_inconsistent_arms_are_refused() -> None:
    arms = _conversion_arms([(1, 10), (2, 10)])
    with pytest.raises(InvalidSetting, match="baseline"):
        analyze_metric(arms, baseline_id="nope", kind=MetricKind.CONVERSION)
    with pytest.raises(InvalidSetting, match="unique"):
        analyze_metric([arms[0], arms[0]], baseline_id="v0", kind=MetricKind.CONVERSION)
    numeric = ArmData(
        treatment_id="x", name="x", allocation=1, summary=Summary.of_values([0.5, 2.0])
    )
    with pytest.raises(InvalidSummary, match="0/1"):
        analyze_metric([arms[0], numeric], baseline_id="v0", kind=MetricKind.CONVERSION)
    with pytest.raises(InvalidSetting, match="SRM"):
        AnalysisSettings(srm_threshold=1.5)
