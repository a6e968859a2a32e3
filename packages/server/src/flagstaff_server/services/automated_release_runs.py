"""The worker's steps of progressive and guarded rollouts (docs/rollouts.md), exactly once.

Per in-progress release and run: for a guarded one, a look at each guardrail metric over the
units exposed since its stage began (the analytics store's per-variation totals, then
`flagstaff_stats.check_guardrail`); then `decide`. A step other than waiting is one transaction:
the lease is checked, the release record is compare-and-set on its version, the flag edit goes
through `flags.commit_edit` (its `updateFlag` audit entry, the change records that reach the
SDKs), and the step's own audit entry is recorded under an id derived from the release, the
stage and the number of events so far: a second worker taking the same step, however it got
there, fails on that key and rolls back everything it wrote.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from flagstaff_server.domain.automated_release import (
    MetricLook,
    Step,
    decide,
    extension_millis,
    finished_flag,
    staged_flag,
    watched,
)
from flagstaff_server.domain.document import clone
from flagstaff_server.domain.experiment_rollout import variation_index
from flagstaff_server.domain.metric import definition
from flagstaff_server.errors import FlagstaffError, LostRace, StoreUnavailable, VersionConflict
from flagstaff_server.services.access import RELEASES
from flagstaff_server.services.approval_gate import PRECLEARED
from flagstaff_server.services.automated_releases import audit, edit_flag_summary, event
from flagstaff_server.services.experiment_ports import PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.experiment_results import (
    MAX_VERSION,
    Aggregator,
    MetricScope,
    Totals,
)
from flagstaff_server.services.flags import commit_edit, get_record
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis
from flagstaff_server.services.ports import JsonObject, UnitOfWork
from flagstaff_server.services.race import retry_lost_races

if TYPE_CHECKING:
    from flagstaff_stats import Summary

LeaseCheck = Callable[[UnitOfWork, datetime], bool]


class NotLeader(Exception):
    """The worker lost its lease while working: the transaction rolls back, the run stops."""


def step_entry_id(release_id: str, stage: int, events: int, step: str) -> str:
    raw = f"automated-release:{release_id}:{stage}:{events}:{step}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def in_progress(plane: ControlPlane) -> list[KeyedRecord]:
    with plane.read() as uow:
        return [r for r in uow.releases.everywhere() if r.doc["status"] == "in_progress"]


def backlog(plane: ControlPlane, now: datetime) -> tuple[int, datetime | None]:
    """Releases whose stage has ended (waiting for a step), and when the oldest stage ended."""
    from flagstaff_server.services.plane import from_epoch_millis

    ends = [int(r.doc["stageDueAt"]) for r in in_progress(plane)]
    due = [end for end in ends if end <= epoch_millis(now)]
    return len(due), (from_epoch_millis(min(due)) if due else None)


def summary_of(by_variation: dict[int, Totals], index: int) -> Summary:
    from flagstaff_stats import Summary

    found = by_variation.get(index)
    if found is None:
        return Summary(n=0, sum=0.0, sum_squares=0.0)
    return Summary(n=found.units, sum=found.total, sum_squares=found.total_squares)


def looks_of(plane: ControlPlane, aggregate: Aggregator, record: KeyedRecord) -> list[MetricLook]:
    """Each guardrail metric over the units exposed in the release's current stage."""
    doc = record.doc
    if doc["releaseKind"] != "guarded":
        return []
    from flagstaff_stats import SuccessCriterion, check_guardrail

    with plane.read() as uow:
        flag = uow.flags.get(record.project, doc["flagKey"])
        metrics = {
            m["key"]: uow.metrics.get(record.project, PROJECT_WIDE, m["key"])
            for m in doc["metrics"]
        }
    if flag is None:
        return []
    original = variation_index(flag.doc, doc["originalVariationId"], "/originalVariationId")
    target = variation_index(flag.doc, doc["targetVariationId"], "/targetVariationId")
    looks = []
    for metric in doc["metrics"]:
        stored = metrics[metric["key"]]
        if stored is None:
            looks.append(
                MetricLook(key=metric["key"], status="insufficient", original_units=0, new_units=0)
            )
            continue
        meaning = definition(stored.doc)
        totals = aggregate(
            MetricScope(
                project=record.project,
                environment=record.environment,
                flag_key=doc["flagKey"],
                first_version=int(doc["stageFirstVersion"]),
                last_version=MAX_VERSION,
                context_kind=doc["randomizationUnit"],
                metric=meaning,
                end_ms=None,
            )
        )
        by_variation = {t.variation: t for t in totals}

        check = check_guardrail(
            summary_of(by_variation, original),
            summary_of(by_variation, target),
            criterion=SuccessCriterion.HIGHER_THAN_BASELINE
            if meaning.higher_is_better
            else SuccessCriterion.LOWER_THAN_BASELINE,
            tolerance=float(metric["regressionThreshold"]),
            minimum_units=int(doc["minSampleSize"]),
        )
        test = check.test
        looks.append(
            MetricLook(
                key=metric["key"],
                status=check.status.value,
                original_units=check.original_units,
                new_units=check.new_units,
                difference=None if test is None else test.estimate,
                lower=None if test is None else test.interval.lower,
                upper=None if test is None else test.interval.upper,
                threshold=check.threshold,
            )
        )
    return looks


def run_step(
    plane: ControlPlane, aggregate: Aggregator, record: KeyedRecord, holds_lease: LeaseCheck
) -> Step | None:
    """Look at one release and take its next step; None when it waits (or changed meanwhile).
    Raises `NotLeader` and `StoreUnavailable`; a release whose flag no longer fits it (deleted,
    its variations removed) stops monitoring, with the error in its events."""
    looks = looks_of(plane, aggregate, record)
    try:
        return retry_lost_races(lambda: step_once(plane, record, looks, holds_lease))
    except (NotLeader, StoreUnavailable, LostRace):
        raise
    except FlagstaffError as exc:
        return give_up(plane, record, exc, holds_lease)


def current(tx: Transaction, record: KeyedRecord, holds_lease: LeaseCheck) -> KeyedRecord | None:
    found = tx.uow.releases.get(record.project, record.environment, record.key)
    if found is None or found.version != record.version or found.doc["status"] != "in_progress":
        return None  # someone paused, stopped or stepped it since it was read: next run
    if not holds_lease(tx.uow, tx.now):
        raise NotLeader(f"lost the lease before stepping release {record.key}")
    return found


def stored(tx: Transaction, record: KeyedRecord, doc: JsonObject) -> KeyedRecord:
    updated = KeyedRecord(
        id=record.id,
        project=record.project,
        environment=record.environment,
        key=record.key,
        version=record.version + 1,
        created=record.created,
        doc=doc,
    )
    try:
        tx.uow.releases.replace(updated, expected_version=record.version)
    except VersionConflict as exc:
        raise LostRace(f"release {record.key} changed while it was stepped") from exc
    return updated


def percent(allocation: int) -> str:
    return f"{allocation / 1000:g}%"


def step_once(
    plane: ControlPlane, record: KeyedRecord, looks: Sequence[MetricLook], holds_lease: LeaseCheck
) -> Step | None:
    with plane.write(RELEASES) as tx:
        found = current(tx, record, holds_lease)
        if found is None:
            return None
        doc = clone(found.doc)
        now = epoch_millis(tx.now)
        step = decide(doc, now, looks)
        look = {"at": now, "stageIndex": doc["stageIndex"], "metrics": [x.present() for x in looks]}
        if step == "wait":
            if looks and look["metrics"] != (doc.get("lastLook") or {}).get("metrics"):
                doc["lastLook"] = look
                stored(tx, found, doc)
            return None
        doc["lastLook"] = look
        entry_id = step_entry_id(doc["_id"], doc["stageIndex"], len(doc["events"]), step)
        take(tx, found, doc, step, looks)
        audit(
            tx,
            stored(tx, found, doc),
            ACTIONS[step],
            doc["events"][-1]["description"],
            entry_id=entry_id,
        )
        return step


ACTIONS = {
    "advance": "advanceAutomatedRelease",
    "complete": "completeAutomatedRelease",
    "extend": "extendAutomatedReleaseStage",
    "revert": "revertAutomatedRelease",
    "regressed": "detectAutomatedReleaseRegression",
}


def take(
    tx: Transaction, record: KeyedRecord, doc: JsonObject, step: Step, looks: Sequence[MetricLook]
) -> None:
    now = epoch_millis(tx.now)
    stages = doc["stages"]
    name = f"{doc['releaseKind'].capitalize()} rollout {doc['_id']}"
    if step == "extend":
        held = [x.key for x in looks if x.status != "ok"]
        doc["stageDueAt"] = now + extension_millis(doc)
        doc["extensions"] = int(doc.get("extensions", 0)) + 1
        event(
            tx,
            doc,
            "stage_extended",
            f"stage {doc['stageIndex'] + 1} held: too little telemetry for "
            f"{', '.join(held)} (at least {doc['minSampleSize']} units per variation needed)",
            looks=[x.present() for x in looks],
        )
        return
    if step == "advance":
        doc["stageIndex"] += 1
        doc["stageStartedAt"] = now
        stage = stages[doc["stageIndex"]]
        doc["stageDueAt"] = now + stage["durationMillis"]
        description = (
            f"stage {doc['stageIndex'] + 1} of {len(stages)}: "
            f"{percent(stage['allocation'])} to the target"
        )
        event(tx, doc, "stage_started", description, looks=[x.present() for x in looks])
        flag = get_record(tx.uow, record.project, doc["flagKey"], for_update=True)
        edited = staged_flag(flag.doc, doc)
        if edited is None:
            let_go(tx, record, doc)
            return
        document = commit_edit(
            tx,
            flag,
            edited,
            action="updateFlag",
            comment=f"{name}: {description}",
            body={"release": doc["_id"]},
            clearance=PRECLEARED,
        )
        doc["stageFirstVersion"] = int(document["environments"][record.environment]["version"])
        return
    if step == "complete":
        doc["status"] = "completed"
        event(
            tx,
            doc,
            "completed",
            "every stage passed: the target variation is served to all",
            looks=[x.present() for x in looks],
        )
        flag = get_record(tx.uow, record.project, doc["flagKey"])
        target = variation_index(flag.doc, doc["targetVariationId"], "/targetVariationId")
        finish(tx, record, doc, {"variation": target}, f"{name}: completed")
        return
    regressed = [
        x for x in looks if x.status == "regressed" and x.key in {m["key"] for m in watched(doc)}
    ]
    worst = regressed[0]
    why = (
        f"metric {worst.key!r} regressed at stage {doc['stageIndex'] + 1}: new - original in "
        f"[{worst.lower:.4g}, {worst.upper:.4g}] is past the threshold {worst.threshold:.4g} "
        f"({worst.original_units} original and {worst.new_units} new units)"
    )
    for metric in doc["metrics"]:
        if metric["key"] in {x.key for x in regressed}:
            metric["regressed"] = True
    event(
        tx, doc, "regression_detected", why, metricKey=worst.key, looks=[x.present() for x in looks]
    )
    if step == "revert":
        doc["status"] = "reverted"
        doc["notice"] = f"Rolled back automatically: {why}"
        event(tx, doc, "reverted", "rolled back: the original variation is served to all")
        flag = get_record(tx.uow, record.project, doc["flagKey"])
        original = variation_index(flag.doc, doc["originalVariationId"], "/originalVariationId")
        finish(tx, record, doc, {"variation": original}, f"{name}: rolled back. {why}")
    else:
        doc["status"] = "monitoring_regressed"
        doc["pausedRemainingMillis"] = max(int(doc["stageDueAt"]) - now, 0)
        doc["notice"] = f"Held for a person (auto-rollback is off): {why}"
        edit_flag_summary(tx, record, doc, None, f"{name}: held. {why}", clearance=PRECLEARED)


def finish(
    tx: Transaction, record: KeyedRecord, doc: JsonObject, what: JsonObject, comment: str
) -> None:
    flag = get_record(tx.uow, record.project, doc["flagKey"], for_update=True)
    edited = finished_flag(flag.doc, doc, what)
    if edited is None:
        let_go(tx, record, doc)
        return
    commit_edit(
        tx,
        flag,
        edited,
        action="updateFlag",
        comment=comment,
        body={"release": doc["_id"]},
        clearance=PRECLEARED,
    )


def let_go(tx: Transaction, record: KeyedRecord, doc: JsonObject) -> None:
    """The rule no longer serves the release's rollout (changed by hand): the release stops
    monitoring and leaves the rule alone."""
    doc["status"] = "monitoring_stopped"
    doc["notice"] = "The rule was changed by hand; the release no longer manages it"
    event(tx, doc, "monitoring_stopped", doc["notice"])
    edit_flag_summary(tx, record, doc, None, doc["notice"], clearance=PRECLEARED)


def give_up(
    plane: ControlPlane, record: KeyedRecord, error: FlagstaffError, holds_lease: LeaseCheck
) -> Step | None:
    with plane.write(RELEASES) as tx:
        found = current(tx, record, holds_lease)
        if found is None:
            return None
        doc = clone(found.doc)
        doc["status"] = "monitoring_stopped"
        doc["notice"] = f"Stopped: {error.message}"
        event(tx, doc, "monitoring_stopped", doc["notice"])
        entry_id = step_entry_id(doc["_id"], doc["stageIndex"], len(doc["events"]), "stopped")
        audit(
            tx,
            stored(tx, found, doc),
            "stopAutomatedReleaseMonitoring",
            doc["notice"],
            entry_id=entry_id,
        )
    return None


__all__ = ["NotLeader", "backlog", "in_progress", "run_step"]
