"""Code-reference use cases in LaunchDarkly's shapes (`/api/v2/code-refs`): repositories (create,
list, read, patch, delete), each branch's references (PUT whole, as `ld-find-code-refs` and
`flagstaff code-refs` upload them), branch deletion and extinction events. Repositories belong
to the account: reading takes any token, writing an unscoped writer. The checks are
`domain.code_reference`'s; no HTTP and no SQL here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.domain.code_reference import (
    REPOSITORY_FIELDS,
    check_branch,
    check_branch_name,
    check_extinctions,
    check_repository,
)
from flagstaff_server.domain.json_patch import apply_json_patch, apply_merge_patch
from flagstaff_server.errors import Conflict, NotFound, SequenceConflict, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.experiment_ports import KeyedRecord
from flagstaff_server.services.plane import ControlPlane, Transaction, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

BASE = "/api/v2/code-refs/repositories"
ACCOUNT = ""
"""The scope of a repository: code references belong to the account, not to a project."""


def _link(href: str) -> JsonObject:
    return {"href": href, "type": "application/json"}


def present_branch(repository: str, record: KeyedRecord, *, references: bool = True) -> JsonObject:
    """LaunchDarkly's `BranchRep`."""
    doc = record.doc
    body: JsonObject = {
        "name": doc["name"],
        "head": doc["head"],
        "updateSequenceId": doc["updateSequenceId"],
        "syncTime": doc["syncTime"],
        "_links": {"self": _link(f"{BASE}/{repository}/branches/{doc['name']}")},
    }
    if doc.get("commitTime") is not None:
        body["commitTime"] = doc["commitTime"]
    if references:
        body["references"] = doc["references"]
    return body


def present_repository(record: KeyedRecord, branches: list[JsonObject] | None = None) -> JsonObject:
    """LaunchDarkly's `RepositoryRep`; `branches` only when asked for."""
    body: JsonObject = {
        **record.doc,
        "version": record.version,
        "_links": {
            "self": _link(f"{BASE}/{record.key}"),
            "branches": _link(f"{BASE}/{record.key}/branches"),
        },
    }
    if branches is not None:
        body["branches"] = branches
    return body


def existing(uow: UnitOfWork, name: str) -> KeyedRecord:
    record = uow.code_ref_repositories.get(ACCOUNT, ACCOUNT, name)
    if record is None:
        raise NotFound(f"no code-references repository {name!r}")
    return record


def _audit(
    tx: Transaction,
    action: str,
    *,
    name: str,
    before: KeyedRecord | None = None,
    after: KeyedRecord | None = None,
) -> None:
    tx.audit(
        kind="codeRefsRepository",
        resource=f"code-reference-repository/{name}",
        action=action,
        before=None if before is None else present_repository(before),
        after=None if after is None else present_repository(after),
    )


def _only_references_of(
    branch: JsonObject, project: str | None, flag: str | None
) -> list[JsonObject]:
    """The branch's references whose hunks match the filters (hunks filtered too)."""
    chosen: list[JsonObject] = []
    for reference in branch["references"]:
        hunks = [
            h
            for h in reference["hunks"]
            if (project is None or h["projKey"] == project)
            and (flag is None or h["flagKey"] == flag)
        ]
        if hunks:
            chosen.append({**reference, "hunks": hunks})
    return chosen


def list_repositories(
    plane: ControlPlane,
    actor: Actor,
    *,
    with_branches: bool = False,
    with_references: bool = False,
    project: str | None = None,
    flag: str | None = None,
) -> JsonObject:
    """`withReferencesForDefaultBranch` adds the default branch with its references, filtered to
    `projKey` and `flagKey` when given."""
    authorize(actor, "reader")
    items: list[JsonObject] = []
    with plane.read() as uow:
        for record in uow.code_ref_repositories.list(ACCOUNT, ACCOUNT):
            branches: list[JsonObject] | None = None
            if with_branches or with_references:
                branches = []
                for branch in uow.code_ref_branches.list(record.key, ACCOUNT):
                    is_default = branch.key == record.doc["defaultBranch"]
                    if not with_branches and not is_default:
                        continue
                    shown = present_branch(record.key, branch, references=False)
                    if with_references and is_default:
                        shown["references"] = _only_references_of(branch.doc, project, flag)
                    branches.append(shown)
            items.append(present_repository(record, branches))
    return {"items": items, "_links": {"self": _link(BASE)}}


def get_repository(plane: ControlPlane, actor: Actor, name: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        return present_repository(existing(uow, name))


def create_repository(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    authorize(actor, "writer")
    doc = check_repository(body)
    with plane.write(actor) as tx:
        record = KeyedRecord(id=new_id(), project=ACCOUNT, key=doc["name"], created=tx.now, doc=doc)
        tx.uow.code_ref_repositories.add(record)
        _audit(tx, "createCodeRefsRepository", name=record.key, after=record)
    return present_repository(record)


def _patched(record: KeyedRecord, body: Any) -> JsonObject:
    """A JSON Patch array, or a JSON Merge Patch object (what `ld-find-code-refs` sends)."""
    editable = {name: record.doc[name] for name in REPOSITORY_FIELDS}
    if isinstance(body, list):
        result = apply_json_patch(editable, body)
    elif isinstance(body, dict):
        result = apply_merge_patch(editable, body)
    else:
        raise ValidationError("expected a JSON Patch array or a JSON Merge Patch object", path="/")
    if result.get("name") != record.key:
        raise ValidationError("a repository's name cannot change", path="/name")
    return check_repository({k: v for k, v in result.items() if k in REPOSITORY_FIELDS})


def patch_repository(plane: ControlPlane, actor: Actor, name: str, body: object) -> JsonObject:
    authorize(actor, "writer")
    with plane.write(actor) as tx:
        record = existing(tx.uow, name)
        doc = _patched(record, body)
        if doc == record.doc:
            return present_repository(record)
        updated = replace(record, version=record.version + 1, doc=doc)
        tx.uow.code_ref_repositories.replace(updated, expected_version=record.version)
        _audit(tx, "updateCodeRefsRepository", name=name, before=record, after=updated)
    return present_repository(updated)


def delete_repository(plane: ControlPlane, actor: Actor, name: str) -> None:
    """The repository with its branches and extinction events."""
    authorize(actor, "writer")
    with plane.write(actor) as tx:
        record = existing(tx.uow, name)
        for branch in tx.uow.code_ref_branches.list(name, ACCOUNT):
            _delete_branch(tx.uow, name, branch.key)
        tx.uow.code_ref_repositories.delete(ACCOUNT, ACCOUNT, name)
        _audit(tx, "deleteCodeRefsRepository", name=name, before=record)


def _delete_branch(uow: UnitOfWork, repository: str, branch: str) -> None:
    for event in uow.code_ref_extinctions.list(repository, branch):
        uow.code_ref_extinctions.delete(repository, branch, event.key)
    uow.code_ref_branches.delete(repository, ACCOUNT, branch)


def list_branches(plane: ControlPlane, actor: Actor, name: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        existing(uow, name)
        items = [
            present_branch(name, b, references=False)
            for b in uow.code_ref_branches.list(name, ACCOUNT)
        ]
    return {"items": items, "_links": {"self": _link(f"{BASE}/{name}/branches")}}


def get_branch(plane: ControlPlane, actor: Actor, name: str, branch: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        existing(uow, name)
        record = uow.code_ref_branches.get(name, ACCOUNT, branch)
        if record is None:
            raise NotFound(f"no branch {branch!r} in the repository {name!r}")
    return present_branch(name, record)


def put_branch(
    plane: ControlPlane, actor: Actor, name: str, branch: str, body: object
) -> JsonObject:
    """Replace the branch's references whole. With `updateSequenceId`, an upload whose id is not
    above the stored one is refused (409 `updateSequenceId_conflict`), so a slow CI job cannot
    overwrite a newer scan."""
    authorize(actor, "writer")
    check_branch_name(branch, "/name")
    doc = check_branch(body, branch)
    with plane.write(actor) as tx:
        repository = existing(tx.uow, name)
        if not repository.doc["enabled"]:
            raise Conflict(f"the code-references repository {name!r} is disabled")
        current = tx.uow.code_ref_branches.get(name, ACCOUNT, branch)
        if current is None:
            record = KeyedRecord(id=new_id(), project=name, key=branch, created=tx.now, doc=doc)
            tx.uow.code_ref_branches.add(record)
            return present_branch(name, record)
        stored, sent = current.doc["updateSequenceId"], doc["updateSequenceId"]
        if stored is not None and sent is not None and sent <= stored:
            raise SequenceConflict(
                f"updateSequenceId {sent} is not above the stored {stored}",
                path="/updateSequenceId",
            )
        record = replace(current, version=current.version + 1, doc=doc)
        tx.uow.code_ref_branches.replace(record, expected_version=current.version)
    return present_branch(name, record)


def delete_branches(plane: ControlPlane, actor: Actor, name: str, body: object) -> None:
    """LaunchDarkly's branch-delete task: an array of branch names, missing ones ignored."""
    authorize(actor, "writer")
    if not isinstance(body, list):
        raise ValidationError("expected an array of branch names", path="/")
    names = [check_branch_name(b, f"/{i}") for i, b in enumerate(body)]
    with plane.write(actor) as tx:
        existing(tx.uow, name)
        for branch in names:
            if tx.uow.code_ref_branches.get(name, ACCOUNT, branch) is not None:
                _delete_branch(tx.uow, name, branch)


def post_extinctions(
    plane: ControlPlane, actor: Actor, name: str, branch: str, body: object
) -> None:
    authorize(actor, "writer")
    check_branch_name(branch, "/branch")
    events = check_extinctions(body)
    with plane.write(actor) as tx:
        existing(tx.uow, name)
        for event in events:
            key = new_id()
            tx.uow.code_ref_extinctions.add(
                KeyedRecord(
                    id=key, project=name, environment=branch, key=key, created=tx.now, doc=event
                )
            )


def extinctions_of(
    uow: UnitOfWork,
    *,
    repository: str | None = None,
    branch: str | None = None,
    project: str | None = None,
    flag: str | None = None,
) -> list[tuple[str, str, JsonObject]]:
    """(repository, branch, event) of the matching extinction events, oldest first."""
    found: list[tuple[str, str, JsonObject]] = []
    for repo in uow.code_ref_repositories.list(ACCOUNT, ACCOUNT):
        if repository is not None and repo.key != repository:
            continue
        for known in uow.code_ref_branches.list(repo.key, ACCOUNT):
            if branch is not None and known.key != branch:
                continue
            for record in uow.code_ref_extinctions.list(repo.key, known.key):
                event = record.doc
                if (project is None or event["projKey"] == project) and (
                    flag is None or event["flagKey"] == flag
                ):
                    found.append((repo.key, known.key, event))
    found.sort(key=lambda item: item[2]["time"])
    return found


def list_extinctions(
    plane: ControlPlane,
    actor: Actor,
    *,
    repository: str | None = None,
    branch: str | None = None,
    project: str | None = None,
    flag: str | None = None,
    start: int | None = None,
    end: int | None = None,
) -> JsonObject:
    """LaunchDarkly's `ExtinctionCollectionRep`: events grouped by flag key."""
    authorize(actor, "reader")
    with plane.read() as uow:
        found = extinctions_of(
            uow, repository=repository, branch=branch, project=project, flag=flag
        )
    items: dict[str, list[JsonObject]] = {}
    for repo, branch_name, event in found:
        if (start is not None and event["time"] < start) or (
            end is not None and event["time"] > end
        ):
            continue
        items.setdefault(event["flagKey"], []).append(
            {**event, "repoName": repo, "branchName": branch_name}
        )
    return {"items": items, "_links": {"self": _link("/api/v2/code-refs/extinctions")}}
