"""One metric of an experiment analysed: every treatment against the baseline by every method
(Welch, sequential, Bayesian), each treatment's posterior and chance to be best, CUPED when
every arm has a covariate, and the sample-ratio check. `correct` then adjusts the p-values of
a family of such analyses. Arithmetic only; `representation` turns the result into JSON.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass

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
from flagstaff_stats.errors import InvalidSetting, InvalidSummary
from flagstaff_stats.interval import Interval
from flagstaff_stats.posterior import (
    Posterior,
    conversion_posterior,
    credible_interval,
    mean_posterior,
)
from flagstaff_stats.sequential import TUNING, SequentialResult, mixing_variance, sequential_test
from flagstaff_stats.significance import ALPHA, check_alpha
from flagstaff_stats.srm import THRESHOLD, SampleRatio, sample_ratio_test
from flagstaff_stats.summary import CovariateSummary, Summary
from flagstaff_stats.welch import WelchResult, welch_test


class MetricKind(enum.Enum):
    """A conversion metric (occurred or not per unit) or a numeric one (a value per unit)."""

    CONVERSION = "conversion"
    NUMERIC = "numeric"


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalysisSettings:
    """How a metric is analysed. `difference_kind` is what the frequentist and Bayesian
    comparisons measure; LaunchDarkly's `relativeDifferences` are relative whatever it is."""

    alpha: float = ALPHA
    difference_kind: DifferenceKind = DifferenceKind.RELATIVE
    sequential_tuning: float = TUNING
    prior: GaussianPrior | None = None  # None: the flat prior (GrowthBook's default)
    srm_threshold: float = THRESHOLD
    use_covariate: bool = True  # CUPED when every arm brings a covariate

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        mixing_variance(alpha=self.alpha, tuning=self.sequential_tuning)
        if not 0 < self.srm_threshold < 1:
            raise InvalidSetting(
                f"the SRM threshold must lie in (0, 1), not {self.srm_threshold!r}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmData:
    """What aggregation knows of one treatment for one metric."""

    treatment_id: str
    name: str
    allocation: float  # the planned share, in any unit (percent, weight): only ratios matter
    summary: Summary | CovariateSummary  # per-unit values of its units, with a covariate for CUPED
    traffic: int | None = None  # exposed units, when it differs from the units with values
    event_values_sum: float | None = None  # Σ of the raw event values, when not Σ per-unit values

    @property
    def outcome(self) -> Summary:
        """The per-unit values of the metric itself."""
        return self.summary.post if isinstance(self.summary, CovariateSummary) else self.summary


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """A treatment against the baseline by every method; the results are None when the
    difference is a `Shortfall`. The adjusted p-values stay None until `correct`."""

    difference: Difference | Shortfall
    welch: WelchResult | None
    sequential: SequentialResult | None
    bayesian: BayesianResult | None
    relative: (
        Difference | Shortfall
    )  # for `relativeDifferences`: the same as `difference` if relative
    relative_bayesian: BayesianResult | None
    adjusted_p_value: float | None = None
    adjusted_sequential_p_value: float | None = None

    @property
    def shortfall(self) -> Shortfall | None:
        """Why some results are missing: the difference's shortfall, else the relative one's."""
        for value in (self.difference, self.relative):
            if isinstance(value, Shortfall):
                return value
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmResult:
    """One treatment's data, posterior and comparison with the baseline (None for the baseline)."""

    treatment_id: str
    name: str
    allocation: float
    is_baseline: bool
    units: int
    traffic: int
    data_mean: float
    data_std_dev: float
    event_values_sum: float
    adjusted_mean: float | None  # CUPED-adjusted, when a covariate was used
    posterior: Posterior | None
    credible_interval: Interval | None
    p_best: float | None
    comparison: Comparison | None
    variance_reduction: float | None  # CUPED: 1 − Var_adjusted(Δ)/Var_unadjusted(Δ)
    covariate_imbalance: float | None  # CUPED: (X̄ − X̄_baseline)/sd(X) pooled


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricAnalysis:
    """Every arm's result, the sample-ratio check and the CUPED adjustment (None if unused)."""

    kind: MetricKind
    criterion: SuccessCriterion
    settings: AnalysisSettings
    baseline_id: str
    arms: tuple[ArmResult, ...]
    sample_ratio: SampleRatio
    cuped: CupedAdjustment | None
    correction: Correction = Correction.NONE


def compare(
    baseline: ArmEstimate,
    treatment: ArmEstimate,
    *,
    criterion: SuccessCriterion = SuccessCriterion.HIGHER_THAN_BASELINE,
    settings: AnalysisSettings = AnalysisSettings(),
) -> Comparison:
    """A treatment against the baseline by every method."""
    kind = settings.difference_kind
    measured = difference(baseline, treatment, kind)
    relative = (
        measured
        if kind is DifferenceKind.RELATIVE
        else difference(baseline, treatment, DifferenceKind.RELATIVE)
    )
    if isinstance(measured, Shortfall):
        welch, sequential, bayesian = None, None, None
    else:
        welch = welch_test(measured, alpha=settings.alpha)
        sequential = sequential_test(
            measured, alpha=settings.alpha, tuning=settings.sequential_tuning
        )
        bayesian = bayesian_test(
            measured, criterion=criterion, prior=settings.prior, alpha=settings.alpha
        )
    if kind is DifferenceKind.RELATIVE:
        relative_bayesian = bayesian
    elif isinstance(relative, Shortfall):
        relative_bayesian = None
    else:  # the prior is on the absolute scale, so the relative posterior takes the flat one
        relative_bayesian = bayesian_test(relative, criterion=criterion, alpha=settings.alpha)
    return Comparison(
        difference=measured,
        welch=welch,
        sequential=sequential,
        bayesian=bayesian,
        relative=relative,
        relative_bayesian=relative_bayesian,
    )


def _check_arms(arms: Sequence[ArmData], baseline_id: str, kind: MetricKind) -> None:
    ids = [arm.treatment_id for arm in arms]
    if len(set(ids)) != len(ids):
        raise InvalidSetting("treatment ids must be unique")
    if baseline_id not in ids:
        raise InvalidSetting(f"the baseline {baseline_id!r} is not among the treatments")
    for arm in arms:
        if arm.traffic is not None and arm.traffic < 0:
            raise InvalidSetting(f"traffic of {arm.treatment_id!r} cannot be negative")
        outcome = arm.outcome
        if kind is MetricKind.CONVERSION and (
            outcome.sum != outcome.sum_squares or outcome.sum > outcome.n
        ):
            raise InvalidSummary(
                f"{arm.treatment_id!r}: a conversion metric has 0/1 values (Σx = Σx² ≤ n)"
            )


def _posterior(
    arm: ArmData, estimate: ArmEstimate, kind: MetricKind, adjusted: bool
) -> Posterior | None:
    if kind is MetricKind.CONVERSION and not adjusted:
        return conversion_posterior(arm.outcome)
    return mean_posterior(estimate)


def _variance_reduction(
    adjusted: Difference | Shortfall, unadjusted: Difference | Shortfall
) -> float | None:
    if isinstance(adjusted, Shortfall) or isinstance(unadjusted, Shortfall):
        return None
    return 1.0 - adjusted.variance / unadjusted.variance


def analyze_metric(
    arms: Sequence[ArmData],
    *,
    baseline_id: str,
    kind: MetricKind,
    criterion: SuccessCriterion = SuccessCriterion.HIGHER_THAN_BASELINE,
    settings: AnalysisSettings = AnalysisSettings(),
) -> MetricAnalysis:
    """Analyse one metric over the experiment's arms against the arm `baseline_id`."""
    _check_arms(arms, baseline_id, kind)
    covariates = [arm.summary for arm in arms if isinstance(arm.summary, CovariateSummary)]
    cuped = (
        cuped_adjust(covariates)
        if settings.use_covariate and len(covariates) == len(arms)
        else None
    )
    plain = [ArmEstimate.of(arm.outcome) for arm in arms]
    estimates = list(cuped.arms) if cuped is not None else plain
    index = [arm.treatment_id for arm in arms].index(baseline_id)
    posteriors = [
        _posterior(arm, estimate, kind, cuped is not None)
        for arm, estimate in zip(arms, estimates, strict=True)
    ]
    present = [p for p in posteriors if p is not None]
    chances: Sequence[float | None] = (
        probabilities_to_be_best(present, criterion)
        if len(present) == len(posteriors)
        else [None] * len(arms)
    )
    results = []
    for i, arm in enumerate(arms):
        outcome = arm.outcome
        posterior = posteriors[i]
        comparison = None
        reduction = imbalance = None
        if i != index:
            comparison = compare(
                estimates[index], estimates[i], criterion=criterion, settings=settings
            )
            if cuped is not None:
                unadjusted = difference(plain[index], plain[i], settings.difference_kind)
                reduction = _variance_reduction(comparison.difference, unadjusted)
                spread = cuped.pooled_covariate_std_dev
                pre = [c.pre.mean for c in covariates]
                imbalance = (pre[i] - pre[index]) / spread if spread > 0 else None
        results.append(
            ArmResult(
                treatment_id=arm.treatment_id,
                name=arm.name,
                allocation=arm.allocation,
                is_baseline=i == index,
                units=outcome.n,
                traffic=outcome.n if arm.traffic is None else arm.traffic,
                data_mean=outcome.mean,
                data_std_dev=outcome.std_dev,
                event_values_sum=outcome.sum
                if arm.event_values_sum is None
                else arm.event_values_sum,
                adjusted_mean=estimates[i].mean if cuped is not None else None,
                posterior=posterior,
                credible_interval=(
                    None if posterior is None else credible_interval(posterior, settings.alpha)
                ),
                p_best=chances[i],
                comparison=comparison,
                variance_reduction=reduction,
                covariate_imbalance=imbalance,
            )
        )
    sample_ratio = sample_ratio_test(
        [result.traffic for result in results],
        [arm.allocation for arm in arms],
        threshold=settings.srm_threshold,
    )
    return MetricAnalysis(
        kind=kind,
        criterion=criterion,
        settings=settings,
        baseline_id=baseline_id,
        arms=tuple(results),
        sample_ratio=sample_ratio,
        cuped=cuped,
    )


def correct(analyses: Sequence[MetricAnalysis], method: Correction) -> tuple[MetricAnalysis, ...]:
    """Adjust the p-values of every treatment of every metric given as one family (the
    fixed-horizon and the sequential p-values each as their own); comparisons without a
    p-value (a `Shortfall`) are not in the family."""
    places: list[tuple[int, int, WelchResult, SequentialResult]] = []
    for m, analysis in enumerate(analyses):
        for a, arm in enumerate(analysis.arms):
            found = arm.comparison
            if found is not None and found.welch is not None and found.sequential is not None:
                places.append((m, a, found.welch, found.sequential))
    fixed = adjust_p_values([welch.p_value for _, _, welch, _ in places], method)
    sequential = adjust_p_values([seq.p_value for _, _, _, seq in places], method)
    arms = [list(analysis.arms) for analysis in analyses]
    for (m, a, _, _), p, q in zip(places, fixed, sequential, strict=True):
        arm = arms[m][a]
        assert arm.comparison is not None  # places holds only arms with a comparison
        comparison = dataclasses.replace(
            arm.comparison, adjusted_p_value=p, adjusted_sequential_p_value=q
        )
        arms[m][a] = dataclasses.replace(arm, comparison=comparison)
    return tuple(
        dataclasses.replace(analysis, arms=tuple(arms[m]), correction=method)
        for m, analysis in enumerate(analyses)
    )
