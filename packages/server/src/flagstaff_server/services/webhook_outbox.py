"""The webhook outbox's writer: for an audit entry being written, one delivery per receiver (a
webhook, or a chat integration of the entry's project) that is on and whose policy filter
passes the entry, in the same transaction as the change, so the two commit or roll back
together. `Transaction.audit` calls it for every entry. It reads the receivers and, only for a
filter that asks, the tags of what changed; it never sends anything (the worker does:
`services.webhook_delivery`). An empty filter passes every change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flagstaff_server.domain.audit_access import Access, accesses, in_environment
from flagstaff_server.domain.policy import (
    PropertyValue,
    Resource,
    ResourcePart,
    allows_any,
    parse_resource,
    parse_statements,
)
from flagstaff_server.services.ports import AuditEntry, EnvironmentRecord, UnitOfWork

ANY_ENVIRONMENT = ":env/*"
# The entry's own document names these kinds' tags (the store may no longer hold them).
DOCUMENT_KINDS: Mapping[str, str] = {
    "project": "proj",
    "environment": "env",
    "flag": "flag",
    "segment": "segment",
    "webhook": "webhook",
}


def enqueue(uow: UnitOfWork, entry: AuditEntry) -> int:
    """Queue `entry` for every receiver it concerns; how many deliveries were queued."""
    project = project_of(entry.resource)
    receivers = [
        record
        for record in uow.webhooks.list()
        if record.on and (record.integration is None or record.project == project)
    ]
    if not receivers:
        return 0
    # stored statements were checked when they were saved: any action name reads back
    filters = [
        (record, parse_statements(record.doc.get("statements"), actions=None))
        for record in receivers
    ]
    asked = any(statements for _, statements in filters)
    found = Resolver(uow, entry).resolve(entry_access_list(entry)) if asked else []
    key = order_key(entry.resource)
    queued = 0
    for record, statements in filters:
        if statements and not allows_any(statements, found):
            continue
        uow.deliveries.enqueue(webhook=record.id, entry=entry.id, order_key=key, at=entry.at)
        queued += 1
    return queued


def entry_access_list(entry: AuditEntry) -> list[Access]:
    return accesses(
        kind=entry.kind,
        resource=entry.resource,
        action=entry.action,
        before=entry.before,
        after=entry.after,
    )


def project_of(resource: str) -> str | None:
    head = resource.split(":", 1)[0]
    return head.removeprefix("proj/") if head.startswith("proj/") else None


def order_key(resource: str) -> str:
    """What deliveries go out in order by: one flag whatever the environment
    (`proj/p:flag/k`), else the resource itself."""
    parts = resource.split(":")
    if len(parts) == 3 and parts[0].startswith("proj/") and parts[2].startswith("flag/"):
        return f"{parts[0]}:{parts[2]}"
    return resource


def tags_of(document: Mapping[str, Any] | None) -> frozenset[str]:
    tags = (document or {}).get("tags")
    if not isinstance(tags, list):
        return frozenset()
    return frozenset(tag for tag in tags if isinstance(tag, str))


class Resolver:
    """Accesses made concrete for a filter: `env/*` becomes each of the project's environments,
    and each part carries its tags (and an environment its `critical` property): the changed
    resource's from the entry's document, its parents' from the store."""

    def __init__(self, uow: UnitOfWork, entry: AuditEntry) -> None:
        self._uow = uow
        self._entry = entry
        self._environments: dict[str, Sequence[EnvironmentRecord]] = {}
        self._project_tags: dict[str, frozenset[str]] = {}

    def resolve(self, found: Sequence[Access]) -> list[tuple[str, Resource]]:
        return [
            (access.action, self.resource(text))
            for access in found
            for text in self.expanded(access.resource)
        ]

    def expanded(self, text: str) -> list[str]:
        project = project_of(text)
        if project is None or ANY_ENVIRONMENT not in text:
            return [text]
        environments = self.environments(project)
        if not environments:
            return [text]
        return [in_environment(text, environment.key) for environment in environments]

    def environments(self, project: str) -> Sequence[EnvironmentRecord]:
        if project not in self._environments:
            self._environments[project] = self._uow.environments.list(project)
        return self._environments[project]

    def resource(self, text: str) -> Resource:
        parts = parse_resource(text).parts
        own = DOCUMENT_KINDS.get(self._entry.kind)
        detailed = []
        for index, part in enumerate(parts):
            if index == len(parts) - 1 and part.type == own:
                document = self._entry.after or self._entry.before
                detailed.append(self.part(part, tags_of(document), document))
            elif part.type == "proj":
                detailed.append(self.part(part, self.project_tags(part.name), None))
            elif part.type == "env" and index == 1:
                project = parts[0].name
                found = next((e for e in self.environments(project) if e.key == part.name), None)
                detailed.append(
                    self.part(
                        part, tags_of(found.doc if found else None), found.doc if found else None
                    )
                )
            else:
                detailed.append(part)
        return Resource(tuple(detailed))

    @staticmethod
    def part(
        part: ResourcePart, tags: frozenset[str], document: Mapping[str, Any] | None
    ) -> ResourcePart:
        properties: dict[str, PropertyValue] = {}
        if part.type == "env":
            properties["critical"] = bool((document or {}).get("critical", False))
        return ResourcePart(type=part.type, name=part.name, tags=tags, properties=properties)

    def project_tags(self, project: str) -> frozenset[str]:
        if project not in self._project_tags:
            record = self._uow.projects.get(project)
            self._project_tags[project] = frozenset(record.tags) if record else frozenset()
        return self._project_tags[project]
