"""Progressive and guarded rollouts ("automated releases", docs/rollouts.md), pure: reading the
`startAutomatedRelease` instruction into a release document, what the release does to its flag
at each stage, and what the next step is given the time and, for a guarded rollout, what its
guardrail metrics show (`decide`).

A release ramps one rule (or the fallthrough) from its original variation to a target variation:
at stage k the rule serves an `experiment` rollout with the target at `stages[k].allocation`
(thousandths of a percent) and the original at the rest, both tracked, so every SDK reports
`inExperiment` and each unit's exposures reach the analytics store. The target comes first in
the rollout and the seed is the release's, so a unit's bucket never moves: a growing allocation
only moves units from the original to the target, each at most once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from flagstaff_server.domain.document import Document, clone, is_valid_context_kind
from flagstaff_server.domain.experiment import FALLTHROUGH, TOTAL_WEIGHT
from flagstaff_server.domain.experiment_rollout import serve, served, target_of, variation_index
from flagstaff_server.domain.instruction import Instruction
from flagstaff_server.errors import Conflict, ValidationError

START, STOP = "startAutomatedRelease", "stopAutomatedRelease"
PAUSE, RESUME = "pauseAutomatedRelease", "resumeAutomatedRelease"
RELEASE_INSTRUCTIONS = (START, STOP, PAUSE, RESUME)
"""Semantic patch instructions on a flag handled by `services.automated_releases`."""

ACTIVE = ("in_progress", "paused", "monitoring_regressed")
"""Statuses of a release that still owns its rule."""
MAX_GUARDED_ALLOCATION = 50_000
"""LaunchDarkly's limit on a guarded stage (50 %): the comparison needs both arms."""
DEFAULT_MINIMUM_UNITS = 100
"""Per arm and stage (flagstaff_stats' guardrail default, LaunchDarkly's policy example)."""
DEFAULT_EXTENSION_MILLIS = 60_000
"""How long a held stage is extended when neither the instruction nor the stage says."""

Step = Literal["wait", "advance", "complete", "extend", "revert", "regressed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricLook:
    """One guardrail metric at one look: `status` as `flagstaff_stats.check_guardrail` says
    (ok, regressed, insufficient) and the numbers it rests on."""

    key: str
    status: str
    original_units: int
    new_units: int
    difference: float | None = None
    lower: float | None = None
    upper: float | None = None
    threshold: float = 0.0

    def present(self) -> dict[str, Any]:
        return {
            "metricKey": self.key,
            "status": self.status,
            "originalUnits": self.original_units,
            "newUnits": self.new_units,
            "difference": self.difference,
            "sequentialConfidenceInterval": None
            if self.lower is None
            else {"lower": self.lower, "upper": self.upper},
            "threshold": self.threshold,
        }


def _integer(value: Any, path: str, *, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValidationError(f"must be an integer ≥ {low}", path=path)
    if high is not None and value > high:
        raise ValidationError(f"must be at most {high}", path=path)
    return value


def _stages(instruction: Instruction, guarded: bool) -> list[dict[str, int]]:
    given = instruction.objects("stages")
    if not given:
        raise instruction.error("at least one stage is required", "stages")
    high = MAX_GUARDED_ALLOCATION if guarded else TOTAL_WEIGHT
    stages: list[dict[str, int]] = []
    for index, stage in enumerate(given):
        where = instruction.path(f"stages/{index}")
        allocation = _integer(stage.get("allocation"), f"{where}/allocation", low=1, high=high)
        if stages and allocation <= stages[-1]["allocation"]:
            raise ValidationError("allocations must grow from stage to stage", path=where)
        duration = _integer(stage.get("durationMillis", 0), f"{where}/durationMillis", low=0)
        stages.append({"allocation": allocation, "durationMillis": duration})
    return stages


def _metrics(instruction: Instruction, known: set[str]) -> list[dict[str, Any]]:
    given = instruction.objects("metrics") if instruction.has("metrics") else []
    if not given:
        raise instruction.error("a guarded rollout needs at least one metric", "metrics")
    preferences = (
        instruction.mapping("metricMonitoringPreferences")
        if instruction.has("metricMonitoringPreferences")
        else {}
    )
    metrics: list[dict[str, Any]] = []
    for index, metric in enumerate(given):
        where = instruction.path(f"metrics/{index}")
        key = metric.get("key")
        if not isinstance(key, str) or key not in known:
            raise ValidationError(f"no custom metric {key!r} in this project", path=f"{where}/key")
        if metric.get("isGroup"):
            raise ValidationError("metric groups are not supported", path=f"{where}/isGroup")
        if any(m["key"] == key for m in metrics):
            raise ValidationError(f"metric {key!r} is listed twice", path=f"{where}/key")
        chosen = preferences.get(key) or {}
        pref_path = instruction.path(f"metricMonitoringPreferences/{key}")
        if not isinstance(chosen, dict):
            raise ValidationError("must be an object", path=pref_path)
        auto = chosen.get("autoRollback", True)
        if not isinstance(auto, bool):
            raise ValidationError("must be a boolean", path=f"{pref_path}/autoRollback")
        threshold = chosen.get("regressionThreshold", 0)
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValidationError("must be a number", path=f"{pref_path}/regressionThreshold")
        if not 0 <= threshold <= 1:
            raise ValidationError(
                "a relative threshold from 0 to 1", path=f"{pref_path}/regressionThreshold"
            )
        metrics.append({"key": key, "autoRollback": auto, "regressionThreshold": float(threshold)})
    return metrics


def release_seed(release_id: str) -> int:
    return int(hashlib.sha256(f"release:{release_id}".encode()).hexdigest()[:7], 16)


def parse_start(
    flag: Document,
    environment: str,
    instruction: Instruction,
    *,
    release_id: str,
    custom_metrics: set[str],
) -> Document:
    """The release document a `startAutomatedRelease` instruction asks for (not yet started)."""
    kind = instruction.string("releaseKind")
    if kind not in ("guarded", "progressive"):
        raise instruction.error("must be 'guarded' or 'progressive'", "releaseKind")
    guarded = kind == "guarded"
    original = instruction.string("originalVariationId")
    target = instruction.string("targetVariationId")
    variation_index(flag, original, instruction.path("originalVariationId"))
    variation_index(flag, target, instruction.path("targetVariationId"))
    if original == target:
        raise instruction.error("must differ from originalVariationId", "targetVariationId")
    unit = instruction.string("randomizationUnit")
    if not is_valid_context_kind(unit):
        raise instruction.error("not a context kind", "randomizationUnit")
    if instruction.has("clauses"):
        raise instruction.error("name an existing rule by ruleId", "clauses")
    rule_id = instruction.optional_string("ruleId") or FALLTHROUGH
    release: Document = {
        "_id": release_id,
        "flagKey": flag["key"],
        "environmentKey": environment,
        "releaseKind": kind,
        "ruleId": rule_id,
        "originalVariationId": original,
        "targetVariationId": target,
        "randomizationUnit": unit,
        "seed": release_seed(release_id),
        "stages": _stages(instruction, guarded),
        "metrics": _metrics(instruction, custom_metrics) if guarded else [],
        "status": "not_started",
        "stageIndex": 0,
        "events": [],
    }
    if guarded:
        release["minSampleSize"] = (
            _integer(
                instruction.params.get("minSampleSize"),
                instruction.path("minSampleSize"),
                low=2,
            )
            if instruction.has("minSampleSize")
            else DEFAULT_MINIMUM_UNITS
        )
        if instruction.has("extensionDurationMillis"):
            release["extensionDurationMillis"] = _integer(
                instruction.params.get("extensionDurationMillis"),
                instruction.path("extensionDurationMillis"),
                low=1,
            )
    return release


def stage_rollout(flag: Document, release: Document, allocation: int) -> dict[str, Any]:
    target = variation_index(flag, release["targetVariationId"], "/targetVariationId")
    original = variation_index(flag, release["originalVariationId"], "/originalVariationId")
    return {
        "kind": "experiment",
        "contextKind": release["randomizationUnit"],
        "seed": release["seed"],
        "variations": [
            {"variation": target, "weight": allocation},
            {"variation": original, "weight": TOTAL_WEIGHT - allocation},
        ],
    }


def carries(target: dict[str, Any], release: Document) -> bool:
    """Whether the rule still serves this release's rollout (nobody replaced it)."""
    rollout = target.get("rollout")
    return isinstance(rollout, dict) and rollout.get("seed") == release["seed"]


def summary(release: Document) -> dict[str, Any]:
    """What the flag's environment shows of its release (`_automatedRelease`): the notice."""
    stage = release["stages"][min(release["stageIndex"], len(release["stages"]) - 1)]
    return {
        "_id": release["_id"],
        "releaseKind": release["releaseKind"],
        "ruleId": release["ruleId"],
        "status": release["status"],
        "stageIndex": release["stageIndex"],
        "allocation": stage["allocation"],
        "notice": release.get("notice"),
    }


def started_flag(flag: Document, environment: str, release: Document) -> tuple[Document, Any]:
    """The flag serving the first stage, and what the rule served before."""
    config = flag.get("environments", {}).get(environment)
    if config is None:
        raise ValidationError(
            "the flag is not configured in this environment", path="/environmentKey"
        )
    if not config.get("on", False):
        raise Conflict("turn the flag on before starting an automated release")
    if flag.get("archived"):
        raise Conflict("the flag is archived")
    edited: Document = clone(flag)
    target = target_of(edited, environment, release["ruleId"])
    before = served(target)
    if "rollout" in before:
        raise Conflict(
            "the rule already serves a rollout (percentage, experiment or automated release)"
        )
    serve(target, {"rollout": stage_rollout(edited, release, release["stages"][0]["allocation"])})
    edited["environments"][environment]["_automatedRelease"] = summary(release)
    return edited, before


def staged_flag(flag: Document, release: Document) -> Document | None:
    """The flag serving the release's current stage (None: the rule no longer carries it)."""
    edited: Document = clone(flag)
    environment = release["environmentKey"]
    try:
        target = target_of(edited, environment, release["ruleId"])
    except ValidationError:
        return None
    if not carries(target, release):
        return None
    allocation = release["stages"][release["stageIndex"]]["allocation"]
    serve(target, {"rollout": stage_rollout(edited, release, allocation)})
    edited["environments"][environment]["_automatedRelease"] = summary(release)
    return edited


def finished_flag(flag: Document, release: Document, what: Document) -> Document | None:
    """The flag serving `what` ({variation} or {rollout}) on the release's rule; None when the
    rule no longer carries the release (left alone)."""
    edited: Document = clone(flag)
    environment = release["environmentKey"]
    try:
        target = target_of(edited, environment, release["ruleId"])
    except ValidationError:
        return None
    if not carries(target, release):
        return None
    serve(target, what)
    edited["environments"][environment]["_automatedRelease"] = summary(release)
    return edited


def decide(release: Document, now_ms: int, looks: Sequence[MetricLook]) -> Step:
    """The next step of an in-progress release at `now_ms`.

    Guarded: a metric whose whole confidence sequence is past its threshold on the bad side is a
    regression, acted on at once (`revert` with auto-rollback, else `regressed`: held for a
    person). At the end of a stage: every metric `ok` (each arm at least the minimum) proceeds;
    any metric `insufficient` holds (`extend`), never proceeding blind. Progressive: the end of
    a stage proceeds. Proceeding past the last stage completes the release."""
    if release["status"] != "in_progress":
        return "wait"
    guarded = release["releaseKind"] == "guarded"
    if guarded:
        by_key = {look.key: look for look in looks}
        for metric in watched(release):
            look = by_key.get(metric["key"])
            if look is not None and look.status == "regressed":
                return "revert" if metric["autoRollback"] else "regressed"
    if now_ms < int(release["stageDueAt"]):
        return "wait"
    if guarded:
        keys = [m["key"] for m in watched(release)]
        statuses = {look.key: look.status for look in looks}
        if any(statuses.get(key) != "ok" for key in keys):
            return "extend"
    last = release["stageIndex"] >= len(release["stages"]) - 1
    return "complete" if last else "advance"


def watched(release: Document) -> list[dict[str, Any]]:
    """The guardrail metrics that decide: all but those whose regression a person dismissed."""
    return [m for m in release["metrics"] if not m.get("dismissed")]


def extension_millis(release: Document) -> int:
    if "extensionDurationMillis" in release:
        return int(release["extensionDurationMillis"])
    duration = int(release["stages"][release["stageIndex"]]["durationMillis"])
    return duration or DEFAULT_EXTENSION_MILLIS


def is_release_instruction(params: Any) -> bool:
    return isinstance(params, dict) and params.get("kind") in RELEASE_INSTRUCTIONS
