"""LaunchDarkly's experiment results representation (`ExperimentBayesianResultsRep`'s
`treatmentResults` and `probabilityOfMismatch`) built from a `MetricAnalysis`, with Flagstaff's
frequentist, sequential and decision fields beside LaunchDarkly's (docs/experiments.md names
and defines every field). Plain JSON values out; camelCase lives here and nowhere else.
"""

from __future__ import annotations

import math

from flagstaff_stats.analysis import ArmResult, Comparison, MetricAnalysis
from flagstaff_stats.bayesian import BayesianResult
from flagstaff_stats.difference import Shortfall
from flagstaff_stats.interval import Interval
from flagstaff_stats.posterior import BetaPosterior, NormalPosterior, Posterior

JsonObject = dict[str, object]


def _number(value: float | None) -> float | None:
    """A finite float, or None: JSON has no infinities or NaN."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _interval(interval: Interval | None) -> JsonObject | None:
    if interval is None:
        return None
    return {"lower": _number(interval.lower), "upper": _number(interval.upper)}


def _distribution(posterior: Posterior | None) -> JsonObject | None:
    if isinstance(posterior, BetaPosterior):
        return {"kind": "beta", "parameters": {"alpha": posterior.alpha, "beta": posterior.beta}}
    if isinstance(posterior, NormalPosterior):
        return {"kind": "normal", "parameters": {"mu": posterior.mu, "sigma": posterior.sigma}}
    return None


def _model(posterior: Posterior | None) -> JsonObject | None:
    if isinstance(posterior, BetaPosterior):
        return {
            "kind": "bayesianBeta",
            "priorAlpha": 1.0,
            "priorBeta": 1.0,
            "priorMean": 0.5,
            "dataWeight": posterior.data_weight,
        }
    if isinstance(posterior, NormalPosterior):
        return {"kind": "bayesianNormal", "priorMean": 0.0, "dataWeight": posterior.data_weight}
    return None


def _relative_differences(
    arm: ArmResult, baseline_id: str, bayesian: BayesianResult | None
) -> list[JsonObject]:
    if bayesian is None:
        return []
    return [
        {
            "fromTreatmentId": baseline_id,
            "lower": _number(bayesian.interval.lower),
            "upper": _number(bayesian.interval.upper),
            "variance": _number(bayesian.std_dev**2),
            "varianceReduction": _number(arm.variance_reduction),
        }
    ]


def _comparison_fields(comparison: Comparison | None) -> JsonObject:
    welch = comparison.welch if comparison else None
    sequential = comparison.sequential if comparison else None
    bayesian = comparison.bayesian if comparison else None
    shortfall = comparison.shortfall if comparison else None
    estimate = (
        comparison.difference.estimate
        if comparison and not isinstance(comparison.difference, Shortfall)
        else None
    )
    return {
        "difference": _number(estimate),
        "pValue": _number(welch.p_value if welch else None),
        "adjustedPValue": _number(comparison.adjusted_p_value if comparison else None),
        "confidenceInterval": _interval(welch.interval if welch else None),
        "sequentialPValue": _number(sequential.p_value if sequential else None),
        "adjustedSequentialPValue": _number(
            comparison.adjusted_sequential_p_value if comparison else None
        ),
        "sequentialConfidenceInterval": _interval(sequential.interval if sequential else None),
        "probabilityToBeatBaseline": _number(bayesian.chance_to_win if bayesian else None),
        "expectedLoss": _number(bayesian.expected_loss if bayesian else None),
        "shortfall": shortfall.value if shortfall else None,
    }


def treatment_result(analysis: MetricAnalysis, arm: ArmResult) -> JsonObject:
    """One entry of `treatmentResults`."""
    cuped = analysis.cuped
    comparison = arm.comparison
    posterior = arm.posterior
    return {
        "treatmentId": arm.treatment_id,
        "treatmentName": arm.name,
        "baseline": arm.is_baseline,
        "units": arm.units,
        "traffic": arm.traffic,
        "dataMean": _number(arm.data_mean),
        "dataStdDev": _number(arm.data_std_dev),
        "eventValuesSum": _number(arm.event_values_sum),
        "adjustedMean": _number(arm.adjusted_mean),
        "mean": _number(posterior.mean if posterior else None),
        "credibleInterval": _interval(arm.credible_interval),
        "pBest": _number(arm.p_best),
        "distribution": _distribution(posterior),
        "model": _model(posterior),
        "relativeDifferences": _relative_differences(
            arm, analysis.baseline_id, comparison.relative_bayesian if comparison else None
        ),
        "correlation": _number(cuped.correlation if cuped else None),
        "standardDeviationRatio": _number(cuped.standard_deviation_ratio if cuped else None),
        "covariateImbalance": _number(arm.covariate_imbalance),
        "varianceReduction": _number(arm.variance_reduction),
        **_comparison_fields(comparison),
    }


def results_representation(analysis: MetricAnalysis) -> JsonObject:
    """The results of one metric: `treatmentResults`, `probabilityOfMismatch` and Flagstaff's
    `sampleRatioMismatch` and `analysis` (the settings the numbers were computed with)."""
    srm = analysis.sample_ratio
    settings = analysis.settings
    prior = settings.prior
    return {
        "treatmentResults": [treatment_result(analysis, arm) for arm in analysis.arms],
        "probabilityOfMismatch": _number(srm.probability_of_mismatch),
        "sampleRatioMismatch": {
            "chiSquared": _number(srm.chi_squared),
            "degreesOfFreedom": srm.degrees_of_freedom,
            "pValue": _number(srm.p_value),
            "threshold": srm.threshold,
            "detected": srm.mismatch,
        },
        "analysis": {
            "metricKind": analysis.kind.value,
            "successCriteria": analysis.criterion.value,
            "baselineTreatmentId": analysis.baseline_id,
            "differenceKind": settings.difference_kind.value,
            "alpha": settings.alpha,
            "sequentialTuningParameter": settings.sequential_tuning,
            "prior": None if prior is None else {"mean": prior.mean, "variance": prior.variance},
            "covariateAdjusted": analysis.cuped is not None,
            "theta": _number(analysis.cuped.theta) if analysis.cuped else None,
            "correction": analysis.correction.value,
        },
    }
