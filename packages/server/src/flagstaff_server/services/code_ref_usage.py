"""Where a project's flags are used, read from every enabled repository's default branch:
LaunchDarkly's `/api/v2/code-refs/statistics/{projectKey}`, and Flagstaff's own per-flag usage
for the flag page (the hunks, links to them, extinctions, and whether the flag is safe to
remove: stale by `domain.flag_staleness` and referenced nowhere once a repository was scanned)."""

from __future__ import annotations

from flagstaff_server.domain.code_reference import flag_hunks, referenced_flags
from flagstaff_server.domain.flag_staleness import staleness
from flagstaff_server.errors import NotFound
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.code_refs import (
    ACCOUNT,
    BASE,
    extinctions_of,
    present_repository,
)
from flagstaff_server.services.experiment_ports import KeyedRecord
from flagstaff_server.services.plane import ControlPlane, epoch_millis
from flagstaff_server.services.ports import JsonObject, UnitOfWork


def scanned(uow: UnitOfWork) -> list[tuple[KeyedRecord, KeyedRecord]]:
    """(repository, its default branch) of every enabled repository whose default branch has
    been uploaded."""
    found: list[tuple[KeyedRecord, KeyedRecord]] = []
    for repository in uow.code_ref_repositories.list(ACCOUNT, ACCOUNT):
        if not repository.doc["enabled"]:
            continue
        branch = uow.code_ref_branches.get(repository.key, ACCOUNT, repository.doc["defaultBranch"])
        if branch is not None:
            found.append((repository, branch))
    return found


def _statistic(repository: KeyedRecord, hunks: int, files: int) -> JsonObject:
    body = present_repository(repository)
    return {**body, "hunkCount": hunks, "fileCount": files}


def statistics(
    plane: ControlPlane, actor: Actor, project: str, flag: str | None = None
) -> JsonObject:
    """LaunchDarkly's `StatisticCollectionRep` (flags with references, per repository), and
    `_safeToRemove`: the project's stale flags no scanned repository references."""
    authorize(actor, "reader", project=project)
    now_ms = epoch_millis(plane.clock())
    with plane.read() as uow:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        flags = uow.flags.list(project)
        repositories = scanned(uow)
    counts: dict[str, list[JsonObject]] = {}
    for repository, branch in repositories:
        for key, (hunks, files) in sorted(referenced_flags(branch.doc, project).items()):
            if flag is None or key == flag:
                counts.setdefault(key, []).append(_statistic(repository, hunks, files))
    removable = [
        record.key
        for record in flags
        if repositories
        and record.key not in counts
        and staleness(record.doc, now_ms).stale
        and (flag is None or record.key == flag)
    ]
    return {
        "flags": counts,
        "_safeToRemove": removable,
        "_links": {
            "self": {"href": f"/api/v2/code-refs/statistics/{project}", "type": "application/json"}
        },
    }


def _hunk_url(template: str, head: str, path: str, line: int) -> str | None:
    """LaunchDarkly's hunk URL template, with `{{sha}}`, `{{filePath}}` and `{{lineNumber}}`."""
    if not template:
        return None
    return (
        template.replace("{{sha}}", head)
        .replace("{{filePath}}", path)
        .replace("{{lineNumber}}", str(line))
    )


def flag_usage(plane: ControlPlane, actor: Actor, project: str, flag: str) -> JsonObject:
    """Every hunk of the flag in each scanned repository's default branch, its extinctions, and
    whether the flag is stale and safe to remove."""
    authorize(actor, "reader", project=project)
    now_ms = epoch_millis(plane.clock())
    with plane.read() as uow:
        record = uow.flags.get(project, flag)
        if record is None:
            raise NotFound(f"no flag {flag!r} in project {project!r}")
        repositories = scanned(uow)
        extinctions = extinctions_of(uow, project=project, flag=flag)
    used: list[JsonObject] = []
    for repository, branch in repositories:
        found = flag_hunks(branch.doc, project, flag)
        if not found:
            continue
        references: dict[str, list[JsonObject]] = {}
        template = repository.doc["hunkUrlTemplate"]
        for path, hunk in found:
            line = hunk["startingLineNumber"]
            shown = {k: hunk[k] for k in ("startingLineNumber", "lines", "aliases")}
            url = _hunk_url(template, branch.doc["head"], path, line)
            if url is not None:
                shown["url"] = url
            references.setdefault(path, []).append(shown)
        used.append(
            {
                "name": repository.key,
                "sourceLink": repository.doc["sourceLink"],
                "defaultBranch": repository.doc["defaultBranch"],
                "head": branch.doc["head"],
                "syncTime": branch.doc["syncTime"],
                "hunkCount": len(found),
                "fileCount": len(references),
                "references": [{"path": p, "hunks": h} for p, h in references.items()],
            }
        )
    state = staleness(record.doc, now_ms)
    return {
        "projectKey": project,
        "flagKey": flag,
        "scannedRepositories": [r.key for r, _ in repositories],
        "repositories": used,
        "extinctions": [
            {**event, "repoName": repo, "branchName": branch} for repo, branch, event in extinctions
        ],
        "stale": state.stale,
        "staleReason": state.reason,
        "safeToRemove": state.stale and bool(repositories) and not used,
        "_links": {"repositories": {"href": BASE, "type": "application/json"}},
    }
