"""The pure rule of progressive and guarded rollouts (`domain.automated_release.decide`) and the
rollout each stage serves (docs/rollouts.md, "The decision rule")."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.automated_release import MetricLook, decide, stage_rollout

NOW = 1_000_000


def release(
    kind: str = "guarded", *, due: int = NOW, stage: int = 0, **more: Any
) -> dict[str, Any]:
    return {
        "releaseKind": kind,
        "status": "in_progress",
        "stageIndex": stage,
        "stageDueAt": due,
        "stages": [
            {"allocation": 10_000, "durationMillis": 1},
            {"allocation": 50_000, "durationMillis": 1},
        ],
        "metrics": [
            {"key": "errors", "autoRollback": True, "regressionThreshold": 0.0},
            {"key": "latency", "autoRollback": False, "regressionThreshold": 0.0},
        ],
        **more,
    }


def look(key: str, status: str) -> MetricLook:
    return MetricLook(key=key, status=status, original_units=100, new_units=100)


OK = [look("errors", "ok"), look("latency", "ok")]


def test_a_regression_with_auto_rollback_reverts_before_the_stage_ends() -> None:
    looks = [look("errors", "regressed"), look("latency", "ok")]
    assert decide(release(due=NOW + 60_000), NOW, looks) == "revert"


def test_a_regression_without_auto_rollback_holds_for_a_person() -> None:
    looks = [look("errors", "ok"), look("latency", "regressed")]
    assert decide(release(due=NOW + 60_000), NOW, looks) == "regressed"


def test_a_dismissed_regression_no_longer_decides() -> None:
    dismissed = release()
    dismissed["metrics"][1]["dismissed"] = True
    assert decide(dismissed, NOW, [look("errors", "ok"), look("latency", "regressed")]) == "advance"


def test_before_the_stage_ends_a_release_without_regression_waits() -> None:
    assert decide(release(due=NOW + 1), NOW, OK) == "wait"


@pytest.mark.parametrize("missing", ["insufficient", None])
def test_too_little_or_no_telemetry_at_the_end_of_a_stage_holds(missing: str | None) -> None:
    looks = [look("errors", "ok")] + ([look("latency", missing)] if missing else [])
    assert decide(release(), NOW, looks) == "extend"


def test_every_metric_ok_at_the_end_of_a_stage_proceeds_and_after_the_last_completes() -> None:
    assert decide(release(stage=0), NOW, OK) == "advance"
    assert decide(release(stage=1), NOW, OK) == "complete"


def test_a_progressive_release_needs_no_metrics_and_only_time() -> None:
    progressive = release("progressive", metrics=[])
    assert decide(progressive, NOW - 1, []) == "wait"
    assert decide(progressive, NOW, []) == "advance"


@pytest.mark.parametrize("status", ["paused", "monitoring_regressed", "completed", "reverted"])
def test_only_a_release_in_progress_steps(status: str) -> None:
    assert decide(release(status=status), NOW, OK) == "wait"


def test_a_stage_serves_the_target_first_with_its_allocation_and_the_release_seed() -> None:
    flag = {"variations": [{"_id": "new", "value": True}, {"_id": "old", "value": False}]}
    doc = {
        "targetVariationId": "new",
        "originalVariationId": "old",
        "randomizationUnit": "user",
        "seed": 42,
    }
    assert stage_rollout(flag, doc, 25_000) == {
        "kind": "experiment",
        "contextKind": "user",
        "seed": 42,
        "variations": [{"variation": 0, "weight": 25_000}, {"variation": 1, "weight": 75_000}],
    }
