"""Metric use cases (LaunchDarkly's `/api/v2/metrics/{projectKey}`): create, list, read, edit
by JSON Patch and delete a project's metrics, each write audit-logged. No HTTP and no SQL here;
the checks are `domain.metric`'s."""

from __future__ import annotations

from dataclasses import replace

from flagstaff_server.domain.json_patch import apply_json_patch, parse_patch_body
from flagstaff_server.domain.metric import check_metric
from flagstaff_server.errors import Conflict, NotFound, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.experiment_ports import PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

AUDIT_KIND = "metric"
DERIVED = ("_id", "_versionId", "_version", "_creationDate", "_links", "experimentCount")


def collection_path(project: str) -> str:
    return f"/api/v2/metrics/{project}"


def resource_of(project: str, key: str) -> str:
    return f"proj/{project}:metric/{key}"


def present(record: KeyedRecord, *, experiment_count: int = 0) -> JsonObject:
    """LaunchDarkly's `MetricRep`."""
    self_path = f"{collection_path(record.project)}/{record.key}"
    return {
        "_id": record.id,
        "_versionId": f"{record.id}-{record.version}",
        "_version": record.version,
        "_creationDate": epoch_millis(record.created),
        **record.doc,
        "experimentCount": experiment_count,
        "_links": {
            "self": {"href": self_path, "type": "application/json"},
            "parent": {"href": collection_path(record.project), "type": "application/json"},
        },
    }


def existing(uow: UnitOfWork, project: str, key: str) -> KeyedRecord:
    if uow.projects.get(project) is None:
        raise NotFound(f"no project {project!r}")
    record = uow.metrics.get(project, PROJECT_WIDE, key)
    if record is None:
        raise NotFound(f"no metric {key!r} in project {project!r}")
    return record


def users_of(uow: UnitOfWork, project: str, key: str) -> list[str]:
    """The experiments (any environment) that measure the metric."""
    found: list[str] = []
    for environment in uow.environments.list(project):
        for experiment in uow.experiments.list(project, environment.key):
            iterations = experiment.doc.get("iterations", [])
            if any(m["key"] == key for it in iterations for m in it.get("metrics", [])):
                found.append(f"{environment.key}/{experiment.key}")
    return found


def audit(
    tx: Transaction,
    record: KeyedRecord,
    action: str,
    *,
    before: KeyedRecord | None = None,
    after: KeyedRecord | None = None,
    comment: str | None = None,
    patch: object = None,
) -> None:
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(record.project, record.key),
        action=action,
        comment=comment,
        patch=patch,
        before=None if before is None else present(before),
        after=None if after is None else present(after),
    )


def create_metric(plane: ControlPlane, actor: Actor, project: str, body: object) -> JsonObject:
    authorize(actor, "writer", project=project)
    doc = check_metric(body)
    with plane.write(actor) as tx:
        if tx.uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        record = KeyedRecord(
            id=new_id(), project=project, key=str(doc["key"]), created=tx.now, doc=doc
        )
        tx.uow.metrics.add(record)
        audit(tx, record, "createMetric", after=record)
    return present(record)


def list_metrics(plane: ControlPlane, project: str) -> JsonObject:
    with plane.read() as uow:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        records = uow.metrics.list(project, PROJECT_WIDE)
        counts = {record.key: len(users_of(uow, project, record.key)) for record in records}
    return {
        "items": [present(r, experiment_count=counts[r.key]) for r in records],
        "totalCount": len(records),
        "_links": {"self": {"href": collection_path(project), "type": "application/json"}},
    }


def get_metric(plane: ControlPlane, project: str, key: str) -> JsonObject:
    with plane.read() as uow:
        record = existing(uow, project, key)
        count = len(users_of(uow, project, key))
    return present(record, experiment_count=count)


def patch_metric(
    plane: ControlPlane, actor: Actor, project: str, key: str, body: object
) -> JsonObject:
    """A JSON Patch of the representation, checked as a create is; the key stays."""
    authorize(actor, "writer", project=project)
    request = parse_patch_body(body)
    if request.kind != "json":
        raise ValidationError("a metric is edited with a JSON Patch", path="/")
    with plane.write(actor) as tx:
        record = existing(tx.uow, project, key)
        patched = apply_json_patch(present(record), request.operations)
        if patched.get("key") != key:
            raise ValidationError("a metric's key cannot change", path="/key")
        doc = check_metric({k: v for k, v in patched.items() if k not in DERIVED})
        if doc == record.doc:
            return present(record, experiment_count=len(users_of(tx.uow, project, key)))
        updated = replace(record, version=record.version + 1, doc=doc)
        tx.uow.metrics.replace(updated, expected_version=record.version)
        audit(
            tx,
            updated,
            "updateMetric",
            before=record,
            after=updated,
            comment=request.comment,
            patch=body,
        )
        count = len(users_of(tx.uow, project, key))
    return present(updated, experiment_count=count)


def delete_metric(plane: ControlPlane, actor: Actor, project: str, key: str) -> None:
    """Refused (409) while an experiment measures it."""
    authorize(actor, "writer", project=project)
    with plane.write(actor) as tx:
        record = existing(tx.uow, project, key)
        users = users_of(tx.uow, project, key)
        if users:
            raise Conflict(f"metric {key!r} is measured by the experiments {', '.join(users)}")
        tx.uow.metrics.delete(project, PROJECT_WIDE, key)
        audit(tx, record, "deleteMetric", before=record)
