"""Flagstaff statistics engine: experiment and guarded-rollout analysis over sufficient
statistics (n, Σx, Σx², and the cross sums of CUPED). Pure: no I/O, clock, randomness or
logging; aggregation hands it summaries, it hands back numbers (docs/experiments.md).
"""

from flagstaff_stats.analysis import (
    AnalysisSettings,
    ArmData,
    ArmResult,
    Comparison,
    MetricAnalysis,
    MetricKind,
    analyze_metric,
    compare,
    correct,
)
from flagstaff_stats.bayesian import BayesianResult, GaussianPrior, bayesian_test
from flagstaff_stats.best_arm import probabilities_to_be_best
from flagstaff_stats.correction import Correction, adjust_p_values
from flagstaff_stats.criterion import SuccessCriterion
from flagstaff_stats.cuped import CupedAdjustment, cuped_adjust
from flagstaff_stats.difference import (
    ArmEstimate,
    Difference,
    DifferenceKind,
    Shortfall,
    difference,
)
from flagstaff_stats.errors import InvalidSetting, InvalidSummary, StatsError
from flagstaff_stats.guardrail import GuardrailCheck, GuardrailStatus, check_guardrail
from flagstaff_stats.interval import Interval
from flagstaff_stats.posterior import BetaPosterior, NormalPosterior, Posterior
from flagstaff_stats.representation import results_representation, treatment_result
from flagstaff_stats.sequential import SequentialResult, sequential_test
from flagstaff_stats.srm import SampleRatio, sample_ratio_test
from flagstaff_stats.summary import CovariateSummary, Summary
from flagstaff_stats.welch import WelchResult, welch_test

__all__ = [
    "AnalysisSettings",
    "ArmData",
    "ArmEstimate",
    "ArmResult",
    "BayesianResult",
    "BetaPosterior",
    "Comparison",
    "Correction",
    "CovariateSummary",
    "CupedAdjustment",
    "Difference",
    "DifferenceKind",
    "GaussianPrior",
    "GuardrailCheck",
    "GuardrailStatus",
    "Interval",
    "InvalidSetting",
    "InvalidSummary",
    "MetricAnalysis",
    "MetricKind",
    "NormalPosterior",
    "Posterior",
    "SampleRatio",
    "SequentialResult",
    "Shortfall",
    "StatsError",
    "SuccessCriterion",
    "Summary",
    "WelchResult",
    "adjust_p_values",
    "analyze_metric",
    "bayesian_test",
    "check_guardrail",
    "compare",
    "correct",
    "cuped_adjust",
    "difference",
    "probabilities_to_be_best",
    "results_representation",
    "sample_ratio_test",
    "sequential_test",
    "treatment_result",
    "welch_test",
]
