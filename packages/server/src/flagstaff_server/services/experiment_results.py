"""An experiment metric's results (`…/experiments/{key}/metrics/{metricKey}/results`): reads the
experiment and the metric, asks the analytics store for per-variation sufficient statistics
(`Aggregator`: SQL elsewhere), and hands them to `flagstaff_stats`, whose results representation
is LaunchDarkly's `ExperimentBayesianResultsRep` with Flagstaff's frequentist and sequential
fields (docs/experiments.md). The family corrected for multiple comparisons (Holm) is every
treatment of every metric of the iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flagstaff_server.domain.experiment import weight_of
from flagstaff_server.domain.experiment_rollout import variation_index
from flagstaff_server.domain.metric import MetricDefinition, definition
from flagstaff_server.errors import NotFound, ValidationError
from flagstaff_server.services.experiment_ports import PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.experiments import existing, iteration_of
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import JsonObject

if TYPE_CHECKING:
    from flagstaff_stats import MetricAnalysis

MAX_VERSION = 2**62


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationScope:
    """Whose exposures count: one iteration's flag versions (inclusive) and unit kind."""

    project: str
    environment: str
    flag_key: str
    first_version: int
    last_version: int
    context_kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricScope(IterationScope):
    """What to aggregate: one metric over one iteration's exposures."""

    metric: MetricDefinition
    end_ms: int | None


@dataclass(frozen=True, slots=True)
class Totals:
    """One variation's per-unit values: n, Σx, Σx², and Σ of the raw event values."""

    variation: int
    units: int
    total: float
    total_squares: float
    event_values_sum: float


Aggregator = Callable[[MetricScope], Sequence[Totals]]
"""Per-variation totals of a metric from the analytics store."""

HOUR_MS = 3_600_000


@dataclass(frozen=True, slots=True)
class ExposureCount:
    """The units of one variation whose first exposure fell in the bucket starting then."""

    bucket_ms: int
    variation: int
    units: int


ExposureCounter = Callable[[IterationScope, int], Sequence[ExposureCount]]
"""First exposures per time bucket (of the given width in ms) and variation, from the
analytics store."""


def iteration_scope(project: str, environment: str, iteration: JsonObject) -> IterationScope:
    [(flag_key, _)] = iteration["flags"].items()
    return IterationScope(
        project=project,
        environment=environment,
        flag_key=flag_key,
        first_version=int(iteration["startVersion"]),
        last_version=int(iteration.get("endVersion", MAX_VERSION)),
        context_kind=str(iteration["randomizationUnit"]),
    )


def scope_of(record: KeyedRecord, iteration: JsonObject, metric: KeyedRecord) -> MetricScope:
    exposures = iteration_scope(record.project, record.environment, iteration)
    return MetricScope(
        **{name: getattr(exposures, name) for name in IterationScope.__dataclass_fields__},
        metric=definition(metric.doc),
        end_ms=iteration.get("endedAt"),
    )


def analysis_of(
    flag: JsonObject, iteration: JsonObject, metric: MetricDefinition, totals: Sequence[Totals]
) -> MetricAnalysis:
    # flagstaff_stats (scipy) is imported where results are asked for: at module level it was
    # about 45% of every `flagstaff` process's start, results or not.
    from flagstaff_stats import ArmData, MetricKind, SuccessCriterion, Summary, analyze_metric

    by_variation = {t.variation: t for t in totals}
    arms = []
    for treatment in iteration["treatments"]:
        index = variation_index(flag, treatment["_id"], "/treatments")
        found = by_variation.get(index, Totals(index, 0, 0.0, 0.0, 0.0))
        arms.append(
            ArmData(
                treatment_id=treatment["_id"],
                name=treatment["name"],
                allocation=weight_of(treatment["allocationPercent"], "/treatments"),
                summary=Summary(n=found.units, sum=found.total, sum_squares=found.total_squares),
                event_values_sum=found.event_values_sum,
            )
        )
    baseline = next(t["_id"] for t in iteration["treatments"] if t["baseline"])
    return analyze_metric(
        arms,
        baseline_id=baseline,
        kind=MetricKind.NUMERIC if metric.numeric else MetricKind.CONVERSION,
        criterion=SuccessCriterion.HIGHER_THAN_BASELINE
        if metric.higher_is_better
        else SuccessCriterion.LOWER_THAN_BASELINE,
    )


def metric_results(
    plane: ControlPlane,
    aggregate: Aggregator,
    project: str,
    environment: str,
    key: str,
    metric_key: str,
    iteration_id: str | None,
) -> JsonObject:
    """The results of one metric of the iteration (default: the current one)."""
    with plane.read() as uow:
        record = existing(uow, project, environment, key)
        iteration = iteration_of(record, iteration_id)
        keys = [m["key"] for m in iteration["metrics"]]
        if metric_key not in keys:
            raise NotFound(f"metric {metric_key!r} is not measured by this iteration")
        metrics = {}
        for name in keys:
            stored = uow.metrics.get(project, PROJECT_WIDE, name)
            if stored is None:
                raise NotFound(f"metric {name!r} no longer exists")
            metrics[name] = stored
        [(flag_key, _)] = iteration["flags"].items()
        flag = uow.flags.get(project, flag_key)
        if flag is None:
            raise NotFound(f"flag {flag_key!r} no longer exists")
    if metrics[metric_key].doc["kind"] != "custom":
        raise ValidationError("only custom metrics have results", path="/metricKey")
    analyses = [
        analysis_of(
            flag.doc,
            iteration,
            definition(metrics[name].doc),
            aggregate(scope_of(record, iteration, metrics[name])),
        )
        for name in keys
    ]
    from flagstaff_stats import Correction, correct, results_representation

    corrected = correct(analyses, Correction.HOLM)
    analysis = corrected[keys.index(metric_key)]
    body: JsonObject = dict(results_representation(analysis))
    body["metricSeen"] = {"ever": any(arm.traffic > 0 for arm in analysis.arms)}
    body["iterationId"] = iteration["_id"]
    body["metricKey"] = metric_key
    return body


def units_over_time(
    plane: ControlPlane,
    count: ExposureCounter,
    project: str,
    environment: str,
    key: str,
    iteration_id: str | None,
) -> JsonObject:
    """Exposed units per treatment, cumulative per hour of first exposure (Flagstaff's: the
    sample sizes behind the results as they grew). Each treatment's `series` holds the hours in
    which it gained units, with its total up to the end of that hour."""
    with plane.read() as uow:
        record = existing(uow, project, environment, key)
        iteration = iteration_of(record, iteration_id)
        [(flag_key, _)] = iteration["flags"].items()
        flag = uow.flags.get(project, flag_key)
        if flag is None:
            raise NotFound(f"flag {flag_key!r} no longer exists")
    counts = count(iteration_scope(project, environment, iteration), HOUR_MS)
    treatments = []
    for treatment in iteration["treatments"]:
        index = variation_index(flag.doc, treatment["_id"], "/treatments")
        total = 0
        series = []
        for found in counts:
            if found.variation == index:
                total += found.units
                series.append({"time": found.bucket_ms, "units": total})
        treatments.append(
            {"treatmentId": treatment["_id"], "treatmentName": treatment["name"], "series": series}
        )
    return {
        "iterationId": iteration["_id"],
        "bucketMillis": HOUR_MS,
        "startedAt": iteration.get("startedAt"),
        "endedAt": iteration.get("endedAt"),
        "treatments": treatments,
    }
