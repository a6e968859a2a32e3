"""Flag use cases: read, create, patch and delete the flags of a project (listing them is
`flag_listing`'s).

Each write is one transaction: load, apply the domain edit, validate, bump versions, store with
compare-and-set, record the audit entry and one change record per environment whose SDK view
changed; the feed hears of it after the commit. No HTTP and no SQL here.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace

from flagstaff_server.domain import (
    FlagLookup,
    apply_flag_json_patch,
    apply_flag_merge_patch,
    apply_semantic_patch,
    bump_versions,
    flag_change,
    json_equal,
    new_flag_document,
    present_flag,
    to_sdk_flag,
    validate_flag_document,
)
from flagstaff_server.errors import (
    AlreadyExists,
    Conflict,
    LostRace,
    NotFound,
    ValidationError,
    VersionConflict,
)
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.approval_gate import DIRECT, Clearance, check_change
from flagstaff_server.services.edit import EditRequest, JsonPatch, MergePatch
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE
from flagstaff_server.services.flag_listing import check_environments
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis
from flagstaff_server.services.ports import FlagRecord, JsonObject, UnitOfWork
from flagstaff_server.services.race import retry_lost_races


def new_flag_id() -> str:
    return str(uuid.uuid4())


def resource_of(project: str, key: str, environment: str | None = None) -> str:
    """The audit log's resource: `proj/P:env/E:flag/K` for a change confined to environment E,
    `proj/P:env/*:flag/K` (the flag in every environment) for anything else."""
    return f"proj/{project}:env/{environment or '*'}:flag/{key}"


def get_record(uow: UnitOfWork, project: str, key: str, *, for_update: bool = False) -> FlagRecord:
    """The stored flag; `for_update` (in a writing unit of work) makes concurrent writers of the
    same flag wait for this transaction instead of racing it."""
    record = uow.flags.get(project, key, for_update=for_update)
    if record is None:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        raise NotFound(f"no flag {key!r} in project {project!r}")
    return record


def get_flag_in(uow: UnitOfWork, project: str, key: str, environment: str) -> FlagRecord:
    """The stored flag, once its project, itself and the environment are known to exist (404s);
    for what is kept per flag and environment (scheduled changes, triggers)."""
    record = get_record(uow, project, key)
    if uow.environments.get(project, environment) is None:
        raise NotFound(f"no environment {environment!r} in project {project!r}")
    return record


def lookup_in(uow: UnitOfWork, project: str, *, edited: JsonObject | None = None) -> FlagLookup:
    """Finds the project's flags for prerequisite checks, seeing `edited` in place of its stored
    version."""

    def lookup(key: str) -> JsonObject | None:
        if edited is not None and key == edited.get("key"):
            return edited
        record = uow.flags.get(project, key)
        return None if record is None else record.doc

    return lookup


def get_flag(
    plane: ControlPlane, project: str, key: str, *, environments: Sequence[str] | None = None
) -> JsonObject:
    with plane.read() as uow:
        record = get_record(uow, project, key)
        check_environments(uow, project, environments)
    return present_flag(record.doc, project_key=project, environment_keys=environments)


def create_flag(plane: ControlPlane, actor: Actor, project: str, body: object) -> JsonObject:
    """A new flag from a `FeatureFlagBody`, configured (off) in every environment."""
    with plane.write(actor) as tx:
        uow = tx.uow
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        environments = uow.environments.list(project)
        now_ms = epoch_millis(tx.now)
        document = new_flag_document(
            body,
            [(env.key, env.name) for env in environments],
            now_ms=now_ms,
            new_id=new_flag_id,
            flag_lookup=lookup_in(uow, project),
        )
        key = str(document["key"])
        if uow.flags.get(project, key) is not None:
            raise AlreadyExists(f"a flag with key {key!r} already exists", path="/key")
        validate_flag_document(document, flag_lookup=lookup_in(uow, project, edited=document))
        check_flag_change(
            tx,
            project,
            None,
            document,
            [env for env, config in document["environments"].items() if config.get("on")],
            comment=None,
            clearance=DIRECT,
            comment_required=False,
        )
        uow.flags.add(FlagRecord(project=project, key=key, version=1, doc=document))
        tx.audit(
            kind="flag",
            resource=resource_of(project, key),
            action="createFlag",
            after=document,  # the body made it: kept once, as the document
        )
        for env in environments:
            announce(tx, project, document, env.key)
    return present_flag(document, project_key=project)


def announce(tx: Transaction, project: str, document: JsonObject, environment: str) -> None:
    """Append the change record for the flag's configuration in one environment."""
    tx.change(
        project=project,
        environment=environment,
        kind="flag",
        key=str(document["key"]),
        version=int(document["environments"][environment]["version"]),
        item=to_sdk_flag(document, environment),
    )


def edited_document(tx: Transaction, record: FlagRecord, request: EditRequest) -> JsonObject | None:
    """The flag after the edit (not yet validated), or None when a semantic patch deletes it."""
    edit = request.edit
    if isinstance(edit, JsonPatch):
        return apply_flag_json_patch(record.doc, edit.operations, new_id=new_flag_id)
    if isinstance(edit, MergePatch):
        return apply_flag_merge_patch(record.doc, edit.merge, new_id=new_flag_id)
    if edit.environment_key is not None:
        authorize(tx.actor, "writer", project=record.project, environment=edit.environment_key)
    check_maintainer_teams(tx.uow, edit.instructions)
    result = apply_semantic_patch(
        record.doc,
        edit.instructions,
        environment_key=edit.environment_key,
        now_ms=epoch_millis(tx.now),
        new_id=new_flag_id,
        flag_lookup=lookup_in(tx.uow, record.project),
    )
    return None if result.delete else result.document


def check_maintainer_teams(uow: UnitOfWork, instructions: list[JsonObject]) -> None:
    """`updateMaintainerTeam` names a team that exists (400 at its `value` otherwise)."""
    for index, instruction in enumerate(instructions):
        if instruction.get("kind") != "updateMaintainerTeam":
            continue
        key = instruction.get("value")
        if not isinstance(key, str) or uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, key) is None:
            raise ValidationError(
                f"instruction {index} (updateMaintainerTeam): no team {key!r}",
                path=f"/instructions/{index}/value",
            )


def patch_flag(
    plane: ControlPlane,
    actor: Actor,
    project: str,
    key: str,
    request: EditRequest,
    *,
    clearance: Clearance = DIRECT,
) -> JsonObject:
    """Apply one PATCH all-or-nothing; a stale `expected_version` or `/_version` test is a 409.
    A write that loses to a concurrent one is re-applied to the winner's state."""

    def attempt() -> JsonObject:
        with plane.write(actor) as tx:
            return edit_flag(tx, project, key, request, clearance=clearance)

    return retry_lost_races(attempt)


def edit_flag(
    tx: Transaction,
    project: str,
    key: str,
    request: EditRequest,
    *,
    clearance: Clearance = DIRECT,
) -> JsonObject:
    """The one path every edit of a flag takes (a PATCH, an applied approval request, a
    scheduled change), inside the caller's transaction: lock, apply, validate, check the
    environments' approval and comment rules against `clearance`, store, audit, announce.
    Returns the flag as the API presents it (as it was, when the edit deleted it)."""
    record = get_record(tx.uow, project, key, for_update=True)
    if request.expected_version is not None and request.expected_version != record.version:
        raise VersionConflict(
            f"flag {key!r} is at version {record.version}, not {request.expected_version}",
            path="/_version",
        )
    after = edited_document(tx, record, request)
    if after is None:
        remove(tx, record, comment=request.comment, patch=request.body, clearance=clearance)
        return present_flag(record.doc, project_key=project)
    document = commit_edit(
        tx,
        record,
        after,
        action="updateFlag",
        comment=request.comment,
        body=request.body,
        clearance=clearance,
    )
    return present_flag(document, project_key=project)


def preview_edit(
    tx: Transaction, record: FlagRecord, request: EditRequest, *, clearance: Clearance = DIRECT
) -> None:
    """Raise what `edit_flag` would raise for this edit of `record` now (bad instructions, a
    flag that no longer fits them, a scope the actor lacks, an environment's approval or comment
    rule not met under `clearance`), storing nothing. With `PRECLEARED`, `tx` may be read-only;
    otherwise an allowed bypass of approval is recorded as `edit_flag` records it."""
    after = edited_document(tx, record, request)
    if after is None:
        dependents = prerequisite_users(tx.uow, record.project, record.key)
        if dependents:
            raise Conflict(
                f"flag {record.key!r} is a prerequisite of {', '.join(map(repr, dependents))}"
            )
        return
    validate_flag_document(after, flag_lookup=lookup_in(tx.uow, record.project, edited=after))
    bump = bump_versions(record.doc, after, epoch_millis(tx.now))
    if not bump.changed:
        return
    check_scope(tx.actor, record.project, record.doc, bump.document, bump.changed_environments)
    check_flag_change(
        tx,
        record.project,
        record.doc,
        bump.document,
        bump.changed_environments,
        comment=request.comment,
        clearance=clearance,
    )


def commit_edit(
    tx: Transaction,
    record: FlagRecord,
    after: JsonObject,
    *,
    action: str,
    comment: str | None,
    body: object,
    clearance: Clearance = DIRECT,
) -> JsonObject:
    """Validate the edited flag, bump its versions, check the approval and comment rules of the
    environments it changes, store it (compare-and-set), and record the audit entry and the
    change records; returns the stored document (unchanged: `record.doc`)."""
    project = record.project
    validate_flag_document(after, flag_lookup=lookup_in(tx.uow, project, edited=after))
    bump = bump_versions(record.doc, after, epoch_millis(tx.now))
    if not bump.changed:
        return record.doc
    document = bump.document
    check_scope(tx.actor, project, record.doc, document, bump.changed_environments)
    check_flag_change(
        tx,
        project,
        record.doc,
        document,
        bump.changed_environments,
        comment=comment,
        clearance=clearance,
    )
    store_flag(tx, record, document)
    tx.audit(
        kind="flag",
        resource=resource_of(project, record.key, flag_change(record.doc, document).environment),
        action=action,
        comment=comment,
        patch=body,
        before=record.doc,
        after=document,
    )
    for environment in bump.changed_environments:
        announce(tx, project, document, environment)
    return document


def check_flag_change(
    tx: Transaction,
    project: str,
    before: JsonObject | None,
    after: JsonObject,
    environments: Sequence[str],
    *,
    comment: str | None,
    clearance: Clearance,
    comment_required: bool = True,
) -> None:
    """The approval and comment rules of `environments` (those whose configuration the change
    alters) for this flag; its tags before and after both count, so removing the tag that makes
    a flag need approval needs approval too."""
    key = str(after["key"])
    check_change(
        tx,
        kind="flag",
        project=project,
        key=key,
        environments=environments,
        tags={*(before or {}).get("tags", []), *after.get("tags", [])},
        comment=comment,
        clearance=clearance,
        resource_of=lambda environment: resource_of(project, key, environment),
        comment_required=comment_required,
    )


def store_flag(tx: Transaction, record: FlagRecord, document: JsonObject) -> None:
    """Compare-and-set the edited flag; losing to a concurrent writer is a `LostRace`."""
    try:
        tx.uow.flags.replace(
            replace(record, version=int(document["_version"]), doc=document),
            expected_version=record.version,
        )
    except VersionConflict as exc:
        raise LostRace(f"flag {record.key!r} changed while this edit was applied") from exc


def check_scope(
    actor: Actor,
    project: str,
    before: JsonObject,
    after: JsonObject,
    environments: Sequence[str],
) -> None:
    """An environment-scoped writer may change that environment's configuration only; flag-level
    fields need a writer for the whole project."""
    flag_level = ("environments", "_version")
    if not json_equal(
        {k: v for k, v in before.items() if k not in flag_level},
        {k: v for k, v in after.items() if k not in flag_level},
    ):
        authorize(actor, "writer", project=project)
    for environment in environments:
        authorize(actor, "writer", project=project, environment=environment)


def prerequisite_users(uow: UnitOfWork, project: str, key: str) -> list[str]:
    """Keys of the project's other flags that have `key` as a prerequisite in any environment."""
    return [
        other.key
        for other in uow.flags.list(project)
        if other.key != key
        and any(
            prerequisite.get("key") == key
            for config in other.doc.get("environments", {}).values()
            for prerequisite in config.get("prerequisites", [])
        )
    ]


def remove(
    tx: Transaction,
    record: FlagRecord,
    *,
    comment: str | None,
    patch: object,
    clearance: Clearance = DIRECT,
    comment_required: bool = True,
) -> None:
    """Delete the flag and tell delivery, in every environment, with a version above the last.
    A flag other flags name as a prerequisite stays: deleting it would silently turn them off.
    Deleting changes what every environment serves, so each one's approval rules apply."""
    dependents = prerequisite_users(tx.uow, record.project, record.key)
    if dependents:
        raise Conflict(
            f"flag {record.key!r} is a prerequisite of {', '.join(map(repr, dependents))}; "
            "remove those prerequisites first"
        )
    check_flag_change(
        tx,
        record.project,
        record.doc,
        record.doc,
        list(record.doc.get("environments", {})),
        comment=comment,
        clearance=clearance,
        comment_required=comment_required,
    )
    try:
        tx.uow.flags.delete(record.project, record.key, expected_version=record.version)
    except VersionConflict as exc:
        raise LostRace(f"flag {record.key!r} changed while it was deleted") from exc
    # a flag made again with this key must not inherit the old one's schedule or triggers
    tx.uow.scheduled_changes.delete_pending(record.project, record.key)
    tx.uow.triggers.delete_for_flag(record.project, record.key)
    tx.uow.approval_requests.delete_pending(record.project, "flag", record.key)
    tx.audit(
        kind="flag",
        resource=resource_of(record.project, record.key),
        action="deleteFlag",
        comment=comment,
        patch=patch,
        before=record.doc,
    )
    for environment, config in record.doc.get("environments", {}).items():
        tx.change(
            project=record.project,
            environment=environment,
            kind="flag",
            key=record.key,
            version=int(config.get("version", 0)) + 1,
            item=None,
        )


def delete_flag(plane: ControlPlane, actor: Actor, project: str, key: str) -> None:
    def attempt() -> None:
        with plane.write(actor) as tx:
            record = get_record(tx.uow, project, key, for_update=True)
            # DELETE carries no comment: the request itself is the record (docs/workflows.md)
            remove(tx, record, comment=None, patch=None, comment_required=False)

    retry_lost_races(attempt)
