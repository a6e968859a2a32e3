"""Reading the audit log: filters, and entries in LaunchDarkly's `AuditLogEntryRep` shape, whose
text names the environment a change was made in.

Entries are written by the use cases through `Transaction.audit`; this module only reads them.
A resource's `env/*` (a flag-level change: name, variations, creation, ...) stands for every
environment, so a scope naming one environment finds it too.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain import FlagChange, flag_change
from flagstaff_server.domain.audit_access import (
    ANY_ENVIRONMENT,
    ENVIRONMENT_PART,
    changed_resources,
)
from flagstaff_server.domain.document import NAME_MAX_LENGTH
from flagstaff_server.errors import NotFound
from flagstaff_server.services.access import (
    ADMIN_TOKEN_ID,
    ADMIN_TOKEN_NAME,
    RELEASES,
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
    "importFlag": "imported the flag",
    "copyFlagConfigFrom": "copied another environment's targeting to the flag",
    "createSegment": "created the segment",
    "updateSegment": "updated the segment",
    "deleteSegment": "deleted the segment",
    "importSegment": "imported the segment",
    "createAccount": "created the account",
    "updateAccount": "updated the account",
    "deleteAccount": "deleted the account",
    "createApprovalRequest": "asked for approval of a change",
    "updateApprovalRequest": "edited an approval request",
    "reviewApprovalRequest": "reviewed an approval request",
    "applyApprovalRequest": "applied an approval request",
    "deleteApprovalRequest": "deleted an approval request",
    "createScheduledChange": "scheduled a change to the flag",
    "updateScheduledChange": "edited a scheduled change to the flag",
    "deleteScheduledChange": "deleted a scheduled change to the flag",
    "executeScheduledChange": "applied a scheduled change to the flag",
    "failScheduledChange": "could not apply a scheduled change to the flag",
    "createIntegration": "created the chat integration",
    "updateIntegration": "updated the chat integration",
    "deleteIntegration": "deleted the chat integration",
    "createWebhook": "created the webhook",
    "updateWebhook": "updated the webhook",
    "deleteWebhook": "deleted the webhook",
    "createTrigger": "created a trigger for the flag",
    "updateTrigger": "edited a trigger of the flag",
    "deleteTrigger": "deleted a trigger of the flag",
    "invokeTrigger": "fired a trigger of the flag",
    "createMetric": "created the metric",
    "updateMetric": "updated the metric",
    "deleteMetric": "deleted the metric",
    "createExperiment": "created the experiment",
    "updateExperiment": "updated the experiment",
    "createCodeRefsRepository": "connected the code-references repository",
    "updateCodeRefsRepository": "updated the code-references repository",
    "deleteCodeRefsRepository": "removed the code-references repository",
    "createNotice": "posted the status notice",
    "deleteNotice": "removed the status notice",
    "breakGlassNotice": "posted the signed status notice",
    "breakGlassNoticeClear": "cleared the signed status notice",
    # break-glass documents, recorded when the control plane returns (services.break_glass)
    "breakGlassTurnOff": "turned off (break-glass) the flag",
    "breakGlassTurnOn": "turned on (break-glass) the flag",
    "breakGlassServeVariation": "pinned one variation (break-glass) of the flag",
    "breakGlassClear": "cleared the break-glass override of the flag",
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


# Actions whose environment reads "into Production" rather than "in Production".
INTO_ENVIRONMENT = frozenset({"importFlag", "importSegment"})


def title_verb(action: str, change: FlagChange | None = None) -> str:
    if action == "updateFlag" and change is not None and change.switched_on is not None:
        return "turned on the flag" if change.switched_on else "turned off the flag"
    return TITLE_VERBS.get(action, action)


def change_of(entry: AuditEntry) -> FlagChange | None:
    """What an edit of a flag changed (None for other kinds, creations and deletions)."""
    if entry.kind != "flag" or entry.before is None or entry.after is None:
        return None
    return flag_change(entry.before, entry.after)


def resources_of(entry: AuditEntry, change: FlagChange | None) -> list[str]:
    """The entry's target resources: an edit of several environments' configurations (filed
    under `env/*`) names each of them; anything else names its one resource."""
    return changed_resources(entry.resource, change)


def environment_of(resource: str) -> tuple[str, str] | None:
    """(project, environment) of a resource inside one environment, such as
    `proj/shop:env/production:flag/k`; None for projects, tokens and `env/*`."""
    parts = resource.split(":")
    if len(parts) < 3 or not parts[0].startswith("proj/") or not parts[1].startswith("env/"):
        return None
    project, environment = parts[0].removeprefix("proj/"), parts[1].removeprefix("env/")
    return None if environment == "*" else (project, environment)


def environment_phrase(action: str, resources: Sequence[str], names: EnvironmentNames) -> str:
    """ " in Production" (" into Production" for imports, " in Production and Test" for several)
    for changes to something inside environments; "" otherwise."""
    found = [where for where in map(environment_of, resources) if where is not None]
    if not found:
        return ""
    titles = [names.get(where, where[1]) for where in found]
    listed = titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} and {titles[-1]}"
    return f" {'into' if action in INTO_ENVIRONMENT else 'in'} {listed}"


def name_of(entry: AuditEntry) -> str:
    for document in (entry.after, entry.before):
        if document:
            # accounts have no name of their own: their email reads better than their id;
            # notices have a title
            name = (
                document.get("name")
                or document.get("email")
                or document.get("title")
                or document.get("key")
            )
            if isinstance(name, str):
                return name
    return entry.resource.rsplit("/", 1)[-1]


def token_names(uow: UnitOfWork) -> dict[str, str]:
    names = {record.id: record.name for record in uow.tokens.list()}
    # web UI accounts act as `account:<id>` (services.accounts.subject_of)
    names.update({f"account:{record.id}": record.email for record in uow.accounts.list()})
    names[ADMIN_TOKEN_ID] = ADMIN_TOKEN_NAME
    names[SYSTEM.token_id] = SYSTEM.name
    names[RELEASES.token_id] = RELEASES.name
    return names


EnvironmentNames = Mapping[tuple[str, str], str]
"""Environment names by (project key, environment key)."""


def environment_names(uow: UnitOfWork) -> dict[tuple[str, str], str]:
    return {(record.project, record.key): record.name for record in uow.environments.list()}


def abridged(text: str) -> str:
    """`text` for a sentence: names and comments are bounded on input, but entries written
    before the bounds may hold megabytes, which the sentences must not repeat."""
    if len(text) <= NAME_MAX_LENGTH:
        return text
    return text[: NAME_MAX_LENGTH - 1] + "…"


def represent(
    entry: AuditEntry, names: Mapping[str, str], environments: EnvironmentNames
) -> JsonObject:
    """LaunchDarkly's entry, with each stored value once: the documents before and after and the
    request are in `delta` only (LaunchDarkly's `previousVersion`/`currentVersion` would repeat
    them), and the sentences carry the name and comment abridged."""
    change = change_of(entry)
    resources = resources_of(entry, change)
    name = name_of(entry)
    short_name = abridged(name)
    verb = title_verb(entry.action, change)
    where = environment_phrase(entry.action, resources, environments)
    actor_name = abridged(names.get(entry.actor, entry.actor))
    description = f"{actor_name} {verb} {short_name}{where}"
    if entry.comment:
        description += f": {abridged(entry.comment)}"
    return {
        "_links": {"self": {"href": f"/api/v2/auditlog/{entry.id}", "type": "application/json"}},
        "_id": entry.id,
        "_accountId": ACCOUNT_ID,
        "date": epoch_millis(entry.at),
        "accesses": [{"action": entry.action, "resource": resource} for resource in resources],
        "kind": entry.kind,
        "name": name,
        "description": description,
        "shortDescription": f"{verb} {short_name}{where}",
        "comment": entry.comment,
        "token": {"_id": entry.actor, "name": actor_name},
        "titleVerb": verb,
        "title": description,
        "target": {"name": short_name, "resources": resources},
        "delta": {"before": entry.before, "after": entry.after, "patch": entry.patch},
    }


def within(resource: str, spec: str) -> bool:
    """Whether `resource` falls under `spec`: a glob when it has `*`, else the resource itself and
    everything inside it (`proj/demo` covers `proj/demo:env/test`, not `proj/demo2`). A
    resource's `env/*` is every environment: `proj/demo:env/*:flag/k` is inside
    `proj/demo:env/test` and matches `proj/*:env/production:flag/*`."""
    if covers(spec, resource):
        return True
    environment = spec_environment(spec)
    if ANY_ENVIRONMENT not in resource or environment is None:
        return False
    return covers(spec, resource.replace(ANY_ENVIRONMENT, f"{ENVIRONMENT_PART}{environment}:", 1))


def covers(spec: str, resource: str) -> bool:
    if "*" in spec:
        return fnmatch.fnmatchcase(resource, spec)
    return resource == spec or resource.startswith(spec + ":")


def spec_environment(spec: str) -> str | None:
    """The environment part of a specifier (`production` in `proj/p:env/production:flag/*`, maybe
    a glob itself), or None when it names none."""
    _, found, rest = spec.partition(ENVIRONMENT_PART)
    return rest.split(":", 1)[0] if found else None


def store_prefix(spec: str) -> str:
    """What every resource matching `spec` starts with, for the store to narrow by: the text
    before a `*`, cut after `env/` since an `env/*` resource matches any environment there."""
    head = spec.split("*", 1)[0]
    at = head.find(ENVIRONMENT_PART)
    return head if at < 0 else head[: at + len(ENVIRONMENT_PART)]


def matches(entry: AuditEntry, query: AuditQuery, scope: str | None) -> bool:
    resources = resources_of(entry, change_of(entry))
    if scope is not None and not any(within(resource, scope) for resource in resources):
        return False
    if query.spec and not any(within(resource, query.spec) for resource in resources):
        return False
    if query.q:
        text = query.q.casefold()
        haystack = [*resources, name_of(entry), entry.comment or ""]
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
    prefix = scope if scope is not None else store_prefix(query.spec or "") or None
    with plane.read() as uow:
        entries = uow.audit.list(
            resource_prefix=prefix,
            since=None if query.after is None else from_epoch_millis(query.after + 1),
            until=None if query.before is None else from_epoch_millis(query.before),
            limit=COUNT_CAP,
        )
        names = token_names(uow)
        environments = environment_names(uow)
    found = [entry for entry in entries if matches(entry, query, scope)]
    page = [represent(entry, names, environments) for entry in found[: query.limit]]
    return page, len(found)


def get_entry(plane: ControlPlane, actor: Actor, entry_id: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        entry = uow.audit.get(entry_id)
        scope = scope_of(actor)
        if entry is None or (scope is not None and not within(entry.resource, scope)):
            raise NotFound(f"no audit log entry {entry_id!r}")
        return represent(entry, token_names(uow), environment_names(uow))
