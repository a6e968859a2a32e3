"""Project use cases: create (with its environments), list, read, edit by JSON Patch, delete.

Representations follow LaunchDarkly's `Project`/`ProjectRep`; a new project without environments in
its body gets LaunchDarkly's two defaults, "production" and "test".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from flagstaff_server.errors import AlreadyExists, NotFound, ValidationError
from flagstaff_server.services import environments, field
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.environments import EnvironmentRequest
from flagstaff_server.services.plane import ControlPlane, Transaction, new_id
from flagstaff_server.services.ports import (
    EnvironmentRecord,
    JsonObject,
    ProjectRecord,
    UnitOfWork,
)

DEFAULT_ENVIRONMENTS = (
    EnvironmentRequest(key="production", name="Production", color="417505"),
    EnvironmentRequest(key="test", name="Test", color="F5A623"),
)

EDITABLE: Mapping[str, field.Rule] = {
    "name": field.check_name,
    "tags": field.check_tags,
    "includeInSnippetByDefault": field.check_bool,
    "defaultClientSideAvailability": field.check_client_side_availability,
    "description": field.check_string,
}
READ_ONLY = ("_id", "key")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRequest:
    key: str
    name: str
    tags: tuple[str, ...] = ()
    include_in_snippet_by_default: bool = False
    default_client_side_availability: Mapping[str, bool] | None = None
    description: str = ""
    # None: LaunchDarkly's defaults (production and test).
    environments: Sequence[EnvironmentRequest] | None = None


def resource_of(project: str) -> str:
    return f"proj/{project}"


def path_of(project: str) -> str:
    return f"/api/v2/projects/{project}"


def links_of(project: str) -> JsonObject:
    return {
        "self": {"href": path_of(project), "type": "application/json"},
        "environments": {"href": f"{path_of(project)}/environments", "type": "application/json"},
        "flags": {"href": f"/api/v2/flags/{project}", "type": "application/json"},
    }


def represent(record: ProjectRecord) -> JsonObject:
    """LaunchDarkly's `Project` shape, without environments."""
    doc = record.doc
    availability = doc.get("defaultClientSideAvailability") or {
        "usingMobileKey": False,
        "usingEnvironmentId": bool(doc.get("includeInSnippetByDefault", False)),
    }
    return {
        "_links": links_of(record.key),
        "_id": doc.get("_id", ""),
        "key": record.key,
        "includeInSnippetByDefault": bool(doc.get("includeInSnippetByDefault", False)),
        "defaultClientSideAvailability": dict(availability),
        "name": record.name,
        "description": doc.get("description", ""),
        "tags": list(record.tags),
    }


def environment_collection(project: str, records: Sequence[EnvironmentRecord]) -> JsonObject:
    """LaunchDarkly's `Environments` collection."""
    return {
        "_links": {
            "self": {"href": f"{path_of(project)}/environments", "type": "application/json"}
        },
        "totalCount": len(records),
        "items": [environments.represent(record) for record in records],
    }


def get_record(uow: UnitOfWork, key: str) -> ProjectRecord:
    record = uow.projects.get(key)
    if record is None:
        raise NotFound(f"no project {key!r}")
    return record


def check_request(request: ProjectRequest) -> ProjectRequest:
    field.check_key(request.key, "/key")
    field.check_name(request.name, "/name")
    tags = field.check_tags(list(request.tags), "/tags")
    field.check_string(request.description, "/description")
    availability = request.default_client_side_availability
    if availability is not None:
        availability = field.check_client_side_availability(
            dict(availability), "/defaultClientSideAvailability"
        )
    envs = DEFAULT_ENVIRONMENTS if request.environments is None else request.environments
    seen: set[str] = set()
    for index, env in enumerate(envs):
        if env.key in seen:
            raise ValidationError(
                f"environment key {env.key!r} appears twice", path=f"/environments/{index}/key"
            )
        seen.add(env.key)
    return replace(
        request,
        tags=tuple(tags),
        default_client_side_availability=availability,
        environments=tuple(envs),
    )


def add(tx: Transaction, request: ProjectRequest) -> JsonObject:
    """Create the project and its environments inside `tx`; returns the `ProjectRep`."""
    request = check_request(request)
    if tx.uow.projects.get(request.key) is not None:
        raise AlreadyExists(f"a project with key {request.key!r} exists", path="/key")
    availability = request.default_client_side_availability or {
        "usingMobileKey": False,
        "usingEnvironmentId": request.include_in_snippet_by_default,
    }
    record = ProjectRecord(
        key=request.key,
        name=request.name,
        tags=request.tags,
        doc={
            "_id": new_id(),
            "includeInSnippetByDefault": availability["usingEnvironmentId"],
            "defaultClientSideAvailability": dict(availability),
            "description": request.description,
        },
        created=tx.now,
    )
    tx.uow.projects.add(record)
    tx.audit(
        kind="project",
        resource=resource_of(record.key),
        action="createProject",
        after=represent(record),
    )
    created = [
        environments.add(tx, record.key, env, path=f"/environments/{index}")
        for index, env in enumerate(request.environments or ())
    ]
    return {**represent(record), "environments": created}


def create_project(plane: ControlPlane, actor: Actor, request: ProjectRequest) -> JsonObject:
    authorize(actor, "admin")
    with plane.write(actor) as tx:
        return add(tx, request)


def expanded(uow: UnitOfWork, actor: Actor, record: ProjectRecord, expand: bool) -> JsonObject:
    body = represent(record)
    if expand:
        envs = environments.visible(actor, uow.environments.list(record.key))
        body["environments"] = environment_collection(record.key, envs)
    return body


def list_projects(
    plane: ControlPlane, actor: Actor, *, expand: bool, limit: int | None, offset: int
) -> tuple[list[JsonObject], int]:
    """One page of the projects `actor` may see, and their total count."""
    authorize(actor, "reader")
    with plane.read() as uow:
        records = [r for r in uow.projects.list() if actor.may("reader", project=r.key)]
        page = records[offset:] if limit is None else records[offset : offset + limit]
        return [expanded(uow, actor, record, expand) for record in page], len(records)


def get_project(plane: ControlPlane, actor: Actor, key: str, *, expand: bool) -> JsonObject:
    authorize(actor, "reader", project=key)
    with plane.read() as uow:
        return expanded(uow, actor, get_record(uow, key), expand)


def patched(record: ProjectRecord, body: Any) -> tuple[ProjectRecord, str | None, Any]:
    before = represent(record)
    del before["_links"]
    patched_fields = field.patch_fields(
        before,
        body,
        editable=EDITABLE,
        read_only=READ_ONLY,
        required=("name", "tags"),
        noun="project",
    )
    values = patched_fields.values
    doc = dict(record.doc)
    doc["description"] = values.get("description", "")
    # LaunchDarkly keeps the old includeInSnippetByDefault in step with usingEnvironmentId.
    availability: dict[str, bool] = dict(
        values.get("defaultClientSideAvailability") or before["defaultClientSideAvailability"]
    )
    include = bool(values.get("includeInSnippetByDefault", before["includeInSnippetByDefault"]))
    if availability != before["defaultClientSideAvailability"]:
        include = availability["usingEnvironmentId"]
    elif include != before["includeInSnippetByDefault"]:
        availability["usingEnvironmentId"] = include
    doc["defaultClientSideAvailability"] = availability
    doc["includeInSnippetByDefault"] = include
    result = replace(record, name=values["name"], tags=tuple(values["tags"]), doc=doc)
    return result, patched_fields.comment, patched_fields.patch


def patch_project(plane: ControlPlane, actor: Actor, key: str, body: Any) -> JsonObject:
    authorize(actor, "admin", project=key)
    with plane.write(actor) as tx:
        record = get_record(tx.uow, key)
        updated, comment, patch = patched(record, body)
        tx.uow.projects.replace(updated)
        after = represent(updated)
        tx.audit(
            kind="project",
            resource=resource_of(key),
            action="updateProject",
            comment=comment,
            patch=patch,
            before=represent(record),
            after=after,
        )
    return after


def delete_project(plane: ControlPlane, actor: Actor, key: str) -> None:
    """Delete the project with its environments, flags and segments; delivery hears that each
    environment is gone."""
    authorize(actor, "admin", project=key)
    with plane.write(actor) as tx:
        record = get_record(tx.uow, key)
        for env in tx.uow.environments.list(key):
            environments.announce(tx, environments.bumped(env), deleted=True)
        tx.uow.projects.delete(key)
        tx.audit(
            kind="project",
            resource=resource_of(key),
            action="deleteProject",
            before=represent(record),
        )
