"""Reading the audit log: filters, and entries in LaunchDarkly's `AuditLogEntryRep` shape.

Entries are written by the use cases through `Transaction.audit`; this module only reads them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.errors import NotFound
from flagstaff_server.services.access import (
    ADMIN_TOKEN_ID,
    ADMIN_TOKEN_NAME,
    SYSTEM,
    Actor,
    authorize,
)
from flagstaff_server.services.plane import ControlPlane, epoch_millis, from_epoch_millis
from flagstaff_server.services.ports import AuditEntry, JsonObject, UnitOfWork

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000
# `totalCount` counts at most this many matching entries (an audit log only grows).
COUNT_CAP = 100_000
ACCOUNT_ID = "flagstaff"

# What each action reads as in a sentence "<token> <titleVerb> <name>".
TITLE_VERBS: Mapping[str, str] = {
    "createProject": "created the project",
    "updateProject": "updated the project",
    "deleteProject": "deleted the project",
    "createEnvironment": "created the environment",
    "updateEnvironment": "updated the environment",
    "deleteEnvironment": "deleted the environment",
    "updateApiKey": "reset the SDK key of",
    "updateMobileKey": "reset the mobile key of",
    "createAccessToken": "created the access token",
    "deleteAccessToken": "revoked the access token",
    "createFlag": "created the flag",
    "updateFlag": "updated the flag",
    "deleteFlag": "deleted the flag",
    "createSegment": "created the segment",
    "updateSegment": "updated the segment",
    "deleteSegment": "deleted the segment",
    "createAccount": "created the account",
    "updateAccount": "updated the account",
    "deleteAccount": "deleted the account",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditQuery:
    # A resource specifier such as `proj/demo:env/production:flag/*`; without `*` it matches as a
    # prefix, so `proj/demo` finds everything in the project.
    spec: str | None = None
    # Epoch milliseconds; entries strictly before / strictly after.
    before: int | None = None
    after: int | None = None
    # Case-insensitive text in the resource's name, resource spec or comment.
    q: str | None = None
    limit: int = DEFAULT_LIMIT


def title_verb(action: str) -> str:
    return TITLE_VERBS.get(action, action)


def name_of(entry: AuditEntry) -> str:
    for document in (entry.after, entry.before):
        if document:
            name = document.get("name") or document.get("key")
            if isinstance(name, str):
                return name
    return entry.resource.rsplit("/", 1)[-1]


def token_names(uow: UnitOfWork) -> dict[str, str]:
    names = {record.id: record.name for record in uow.tokens.list()}
    # web UI accounts act as `account:<id>` (services.accounts.subject_of)
    names.update({f"account:{record.id}": record.email for record in uow.accounts.list()})
    names[ADMIN_TOKEN_ID] = ADMIN_TOKEN_NAME
    names[SYSTEM.token_id] = SYSTEM.name
    return names


def represent(entry: AuditEntry, names: Mapping[str, str]) -> JsonObject:
    name = name_of(entry)
    verb = title_verb(entry.action)
    actor_name = names.get(entry.actor, entry.actor)
    description = f"{actor_name} {verb} {name}"
    if entry.comment:
        description += f": {entry.comment}"
    return {
        "_links": {"self": {"href": f"/api/v2/auditlog/{entry.id}", "type": "application/json"}},
        "_id": entry.id,
        "_accountId": ACCOUNT_ID,
        "date": epoch_millis(entry.at),
        "accesses": [{"action": entry.action, "resource": entry.resource}],
        "kind": entry.kind,
        "name": name,
        "description": description,
        "shortDescription": f"{verb} {name}",
        "comment": entry.comment,
        "token": {"_id": entry.actor, "name": actor_name},
        "titleVerb": verb,
        "title": description,
        "target": {"name": name, "resources": [entry.resource]},
        "delta": {"before": entry.before, "after": entry.after, "patch": entry.patch},
        "previousVersion": entry.before,
        "currentVersion": entry.after,
    }


def within(resource: str, spec: str) -> bool:
    """Whether `resource` falls under `spec`: a glob when it has `*`, else the resource itself and
    everything inside it (`proj/demo` covers `proj/demo:env/test`, not `proj/demo2`)."""
    if "*" in spec:
        return fnmatch.fnmatchcase(resource, spec)
    return resource == spec or resource.startswith(spec + ":")


def matches(entry: AuditEntry, query: AuditQuery, scope: str | None) -> bool:
    if scope is not None and not within(entry.resource, scope):
        return False
    if query.spec and not within(entry.resource, query.spec):
        return False
    if query.q:
        text = query.q.casefold()
        haystack = [entry.resource, name_of(entry), entry.comment or ""]
        if not any(text in part.casefold() for part in haystack):
            return False
    return True


def scope_of(actor: Actor) -> str | None:
    """Scoped tokens read only their project's entries."""
    return None if actor.project is None else f"proj/{actor.project}"


def list_entries(plane: ControlPlane, actor: Actor, query: AuditQuery) -> tuple[list[Any], int]:
    """Matching entries, newest first, at most `query.limit`, and how many match in all."""
    authorize(actor, "reader")
    scope = scope_of(actor)
    # The store narrows by prefix; `matches` then applies the exact rules.
    prefix = scope if scope is not None else (query.spec or "").split("*", 1)[0] or None
    with plane.read() as uow:
        entries = uow.audit.list(
            resource_prefix=prefix,
            since=None if query.after is None else from_epoch_millis(query.after + 1),
            until=None if query.before is None else from_epoch_millis(query.before),
            limit=COUNT_CAP,
        )
        names = token_names(uow)
    found = [entry for entry in entries if matches(entry, query, scope)]
    return [represent(entry, names) for entry in found[: query.limit]], len(found)


def get_entry(plane: ControlPlane, actor: Actor, entry_id: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        entry = uow.audit.get(entry_id)
        scope = scope_of(actor)
        if entry is None or (scope is not None and not within(entry.resource, scope)):
            raise NotFound(f"no audit log entry {entry_id!r}")
        return represent(entry, token_names(uow))
