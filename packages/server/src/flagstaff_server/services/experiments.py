"""Experiment use cases (LaunchDarkly's `/api/v2/projects/{p}/environments/{e}/experiments`):
create with a draft iteration, list, read, add an iteration, and the semantic patch that renames,
starts, stops, archives and restores. Starting and stopping an iteration edit its flag through
`flags.commit_edit`, the one path of every flag edit (validation, approval rules, audit, change
records), in the same transaction as the experiment. No HTTP and no SQL here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.domain.document import clone
from flagstaff_server.domain.experiment import (
    check_experiment,
    check_experiment_patch,
    check_iteration,
)
from flagstaff_server.domain.experiment_rollout import (
    started_flag,
    stopped_flag,
    target_of,
    variation_index,
)
from flagstaff_server.errors import Conflict, NotFound, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.experiment_ports import PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.flags import commit_edit, get_flag_in, get_record
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

AUDIT_KIND = "experiment"
INTERNAL = ("servedBefore", "startVersion", "endVersion")
"""Kept with an iteration for stopping it and for its results; not in the representation."""


def collection_path(project: str, environment: str) -> str:
    return f"/api/v2/projects/{project}/environments/{environment}/experiments"


def resource_of(project: str, environment: str, key: str) -> str:
    return f"proj/{project}:env/{environment}:experiment/{key}"


def present_iteration(iteration: JsonObject) -> JsonObject:
    """LaunchDarkly's `IterationRep`."""
    shown = {k: clone(v) for k, v in iteration.items() if k not in INTERNAL}
    shown["primaryMetric"] = {"key": iteration["primarySingleMetricKey"], "isGroup": False}
    shown["primarySingleMetric"] = {"key": iteration["primarySingleMetricKey"]}
    return shown


def present(record: KeyedRecord) -> JsonObject:
    """LaunchDarkly's `Experiment`: the newest iteration is the draft (not started) or the
    current one; the others are previous iterations."""
    doc = record.doc
    iterations = doc["iterations"]
    newest = iterations[-1]
    body: JsonObject = {
        "_id": record.id,
        "key": record.key,
        "name": doc["name"],
        "description": doc["description"],
        "tags": doc["tags"],
        "_maintainerId": doc["maintainerId"],
        "_creationDate": epoch_millis(record.created),
        "environmentKey": record.environment,
        "_version": record.version,
        "previousIterations": [present_iteration(it) for it in iterations[:-1]],
        "_links": {
            "self": {
                "href": f"{collection_path(record.project, record.environment)}/{record.key}",
                "type": "application/json",
            },
            "parent": {
                "href": collection_path(record.project, record.environment),
                "type": "application/json",
            },
        },
    }
    if newest["status"] == "not_started":
        body["draftIteration"] = present_iteration(newest)
        if len(iterations) > 1:
            body["currentIteration"] = present_iteration(iterations[-2])
            body["previousIterations"] = [present_iteration(it) for it in iterations[:-2]]
    else:
        body["currentIteration"] = present_iteration(newest)
    if doc.get("archivedDate") is not None:
        body["archivedDate"] = doc["archivedDate"]
    return body


def existing(uow: UnitOfWork, project: str, environment: str, key: str) -> KeyedRecord:
    if uow.environments.get(project, environment) is None:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        raise NotFound(f"no environment {environment!r} in project {project!r}")
    record = uow.experiments.get(project, environment, key)
    if record is None:
        raise NotFound(f"no experiment {key!r} in {project!r}/{environment!r}")
    return record


def checked_iteration(
    tx: Transaction, project: str, environment: str, iteration: JsonObject, at: str
) -> JsonObject:
    """The iteration checked against its flag and metrics, with its id and status."""
    for index, metric in enumerate(iteration["metrics"]):
        record = tx.uow.metrics.get(project, PROJECT_WIDE, metric["key"])
        if record is None:
            raise ValidationError(
                f"no metric {metric['key']!r} in project {project!r}",
                path=f"{at}/metrics/{index}/key",
            )
        if record.doc["kind"] != "custom":
            raise ValidationError(
                "only custom metrics can be measured", path=f"{at}/metrics/{index}/key"
            )
        if iteration["randomizationUnit"] not in record.doc["randomizationUnits"]:
            raise ValidationError(
                f"metric {metric['key']!r} is not measured per {iteration['randomizationUnit']!r}",
                path=f"{at}/metrics/{index}/key",
            )
    [(flag_key, ref)] = iteration["flags"].items()
    try:
        flag = get_flag_in(tx.uow, project, flag_key, environment)
    except NotFound as exc:
        raise ValidationError(exc.message, path=f"{at}/flags/{flag_key}") from exc
    try:
        target_of(flag.doc, environment, ref["ruleId"])
    except ValidationError as exc:
        raise ValidationError(exc.message, path=f"{at}/flags/{flag_key}/ruleId") from exc
    for index, treatment in enumerate(iteration["treatments"]):
        variation_index(
            flag.doc, treatment["_id"], f"{at}/treatments/{index}/parameters/0/variationId"
        )
    outside = ref.get("notInExperimentVariationId")
    if outside is not None:
        variation_index(flag.doc, outside, f"{at}/flags/{flag_key}/notInExperimentVariationId")
    return {
        "_id": new_id(),
        "status": "not_started",
        "createdAt": epoch_millis(tx.now),
        **iteration,
    }


def audit(
    tx: Transaction,
    before: KeyedRecord | None,
    after: KeyedRecord,
    action: str,
    *,
    comment: str | None = None,
    patch: object = None,
) -> None:
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(after.project, after.environment, after.key),
        action=action,
        comment=comment,
        patch=patch,
        before=None if before is None else present(before),
        after=present(after),
    )


def create_experiment(
    plane: ControlPlane, actor: Actor, project: str, environment: str, body: object
) -> JsonObject:
    authorize(actor, "writer", project=project, environment=environment)
    fields, iteration = check_experiment(body)
    with plane.write(actor) as tx:
        if tx.uow.environments.get(project, environment) is None:
            raise NotFound(f"no environment {environment!r} in project {project!r}")
        draft = checked_iteration(tx, project, environment, iteration, "/iteration")
        doc = {**fields, "maintainerId": actor.token_id, "iterations": [draft]}
        record = KeyedRecord(
            id=new_id(),
            project=project,
            environment=environment,
            key=str(fields["key"]),
            created=tx.now,
            doc=doc,
        )
        tx.uow.experiments.add(record)
        audit(tx, None, record, "createExperiment")
    return present(record)


def list_experiments(plane: ControlPlane, project: str, environment: str) -> JsonObject:
    with plane.read() as uow:
        if uow.environments.get(project, environment) is None:
            raise NotFound(f"no environment {environment!r} in project {project!r}")
        records = uow.experiments.list(project, environment)
    return {
        "items": [present(record) for record in records],
        "total_count": len(records),
        "_links": {
            "self": {"href": collection_path(project, environment), "type": "application/json"}
        },
    }


def get_experiment(plane: ControlPlane, project: str, environment: str, key: str) -> JsonObject:
    with plane.read() as uow:
        return present(existing(uow, project, environment, key))


def read_experiment(plane: ControlPlane, project: str, environment: str, key: str) -> KeyedRecord:
    with plane.read() as uow:
        return existing(uow, project, environment, key)


def add_iteration(
    plane: ControlPlane, actor: Actor, project: str, environment: str, key: str, body: object
) -> JsonObject:
    """A new draft iteration (replacing a draft not started); the current one must be stopped."""
    authorize(actor, "writer", project=project, environment=environment)
    iteration = check_iteration(body, "")
    with plane.write(actor) as tx:
        record = existing(tx.uow, project, environment, key)
        iterations = list(record.doc["iterations"])
        if iterations[-1]["status"] == "running":
            raise Conflict("stop the running iteration first")
        if iterations[-1]["status"] == "not_started":
            iterations.pop()
        draft = checked_iteration(tx, project, environment, iteration, "")
        updated = stored(tx, record, {**record.doc, "iterations": [*iterations, draft]})
        audit(tx, record, updated, "updateExperiment", patch=body)
    return present_iteration(draft)


def stored(tx: Transaction, record: KeyedRecord, doc: JsonObject) -> KeyedRecord:
    updated = replace(record, version=record.version + 1, doc=doc)
    tx.uow.experiments.replace(updated, expected_version=record.version)
    return updated


def patch_experiment(
    plane: ControlPlane, actor: Actor, project: str, environment: str, key: str, body: object
) -> JsonObject:
    """LaunchDarkly's semantic patch of an experiment, all or nothing."""
    authorize(actor, "writer", project=project, environment=environment)
    instructions, comment = check_experiment_patch(body)
    with plane.write(actor) as tx:
        record = existing(tx.uow, project, environment, key)
        doc = clone(record.doc)
        for index, instruction in enumerate(instructions):
            apply_instruction(tx, record, doc, instruction, f"/instructions/{index}", comment)
        if doc == record.doc:
            return present(record)
        updated = stored(tx, record, doc)
        audit(tx, record, updated, "updateExperiment", comment=comment, patch=body)
    return present(updated)


def apply_instruction(
    tx: Transaction,
    record: KeyedRecord,
    doc: JsonObject,
    instruction: dict[str, Any],
    at: str,
    comment: str | None,
) -> None:
    kind = instruction["kind"]
    newest = doc["iterations"][-1]
    if kind == "updateName":
        doc["name"] = instruction["value"]
    elif kind == "updateDescription":
        doc["description"] = instruction["value"]
    elif kind == "archiveExperiment":
        if newest["status"] == "running":
            raise Conflict("stop the running iteration before archiving")
        doc["archivedDate"] = epoch_millis(tx.now)
    elif kind == "restoreExperiment":
        doc.pop("archivedDate", None)
    elif kind == "startIteration":
        if doc.get("archivedDate") is not None:
            raise Conflict("the experiment is archived")
        if newest["status"] != "not_started":
            raise Conflict("there is no draft iteration to start: add one first")
        start(tx, record, newest, comment)
    else:  # stopIteration
        if newest["status"] != "running":
            raise Conflict("no iteration is running")
        winner = instruction.get("winningTreatmentId")
        if winner is not None and winner not in [t["_id"] for t in newest["treatments"]]:
            raise ValidationError("no treatment has this id", path=f"{at}/winningTreatmentId")
        stop(tx, record, newest, winner, comment)
        if winner is not None:
            newest["winningTreatmentId"] = winner
        if instruction.get("winningReason") is not None:
            newest["winningReason"] = instruction["winningReason"]


def start(tx: Transaction, record: KeyedRecord, iteration: JsonObject, comment: str | None) -> None:
    """The flag's rule gets the experiment rollout; the iteration records what it replaced and
    the flag's version in the environment from which exposures count."""
    [(flag_key, _)] = iteration["flags"].items()
    flag = get_record(tx.uow, record.project, flag_key, for_update=True)
    edited, before = started_flag(flag.doc, record.environment, iteration)
    document = commit_edit(
        tx,
        flag,
        edited,
        action="updateFlag",
        comment=comment or f"Experiment {record.key!r}: iteration started",
        body={"experimentKey": record.key, "instructions": [{"kind": "startIteration"}]},
    )
    version = int(document["environments"][record.environment]["version"])
    iteration.update(
        status="running",
        startedAt=epoch_millis(tx.now),
        servedBefore=before,
        startVersion=version,
    )
    iteration["flags"][flag_key]["flagConfigVersion"] = version


def stop(
    tx: Transaction,
    record: KeyedRecord,
    iteration: JsonObject,
    winner: str | None,
    comment: str | None,
) -> None:
    [(flag_key, _ref)] = iteration["flags"].items()
    flag = get_record(tx.uow, record.project, flag_key, for_update=True)
    iteration.update(
        status="stopped",
        endedAt=epoch_millis(tx.now),
        endVersion=int(flag.doc["environments"][record.environment]["version"]),
    )
    edited = stopped_flag(flag.doc, record.environment, iteration, winner)
    if edited is None:
        return
    commit_edit(
        tx,
        flag,
        edited,
        action="updateFlag",
        comment=comment or f"Experiment {record.key!r}: iteration stopped",
        body={"experimentKey": record.key, "instructions": [{"kind": "stopIteration"}]},
    )


def iteration_of(record: KeyedRecord, iteration_id: str | None) -> JsonObject:
    """The named iteration, or the current one (the newest started)."""
    iterations = record.doc["iterations"]
    if iteration_id is not None:
        for iteration in iterations:
            if iteration["_id"] == iteration_id:
                return dict(iteration)
        raise NotFound(f"no iteration {iteration_id!r} in experiment {record.key!r}")
    started = [it for it in iterations if it["status"] != "not_started"]
    if not started:
        raise Conflict(f"experiment {record.key!r} has not started")
    return dict(started[-1])
