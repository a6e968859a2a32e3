"""Listing a project's flags: LaunchDarkly's list filters (`FlagQuery`, the `filter=` syntax),
which flags match them, one page of the presented flags and the collection's links. Reads only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from flagstaff_server.domain import present_flag
from flagstaff_server.errors import InvalidInput, NotFound
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import JsonObject, UnitOfWork

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000


STATES = ("live", "deprecated", "archived")


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagQuery:
    """LaunchDarkly's list filters: `env` (environments shown), `tag`, `archived`, paging, and the
    `filter` subset `query`, `tags`, `state`, `type`, `archived` (see `parse_filter`)."""

    environments: tuple[str, ...] | None = None
    tag: str | None = None
    archived: bool | None = None
    """True: only archived flags; False or None: only flags that are not archived."""
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    text: str | None = None
    """Case-insensitive substring of the key or name."""
    tags: tuple[str, ...] = ()
    """Every one of these tags."""
    state: str | None = None
    """"live", "deprecated" or "archived"; replaces the `archived` rule when given."""
    temporary: bool | None = None
    summary: bool = False
    """LaunchDarkly's `summary`: each environment without prerequisites, targets and rules."""


def parse_filter(text: str, query: FlagQuery) -> FlagQuery:
    """`query` narrowed by LaunchDarkly's `filter=field:value,...` (`query:dark-mode`,
    `tags:beta+test`, `state:live|deprecated|archived`, `type:temporary|permanent`,
    `archived:true|false`); other fields are a 400 naming them."""
    changes: dict[str, Any] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        field, separator, value = part.partition(":")
        if not separator or not value:
            raise InvalidInput(f"filter {part!r} is not field:value", path="filter")
        if field == "query":
            changes["text"] = value
        elif field == "tags":
            changes["tags"] = tuple(tag for tag in value.split("+") if tag)
        elif field == "state" and value in STATES:
            changes["state"] = value
        elif field == "type" and value in ("temporary", "permanent"):
            changes["temporary"] = value == "temporary"
        elif field == "archived" and value in ("true", "false"):
            changes["archived"] = value == "true"
        else:
            raise InvalidInput(
                f"unsupported filter {part!r}: use query, tags, state (live, deprecated, "
                "archived), type (temporary, permanent) or archived (true, false)",
                path="filter",
            )
    return replace(query, **changes)


def matches(doc: JsonObject, query: FlagQuery) -> bool:
    archived = bool(doc.get("archived", False))
    if query.state is None:
        if archived != bool(query.archived):
            return False
    elif query.state == "archived":
        if not archived:
            return False
    elif archived or bool(doc.get("deprecated", False)) != (query.state == "deprecated"):
        return False
    tags = set(doc.get("tags", []))
    if query.tag is not None and query.tag not in tags:
        return False
    if not tags.issuperset(query.tags):
        return False
    if query.temporary is not None and bool(doc.get("temporary", False)) != query.temporary:
        return False
    if query.text is not None:
        needle = query.text.lower()
        return (
            needle in str(doc.get("key", "")).lower() or needle in str(doc.get("name", "")).lower()
        )
    return True


def check_environments(uow: UnitOfWork, project: str, keys: Sequence[str] | None) -> None:
    if keys is None:
        return
    known = {record.key for record in uow.environments.list(project)}
    for key in keys:
        if key not in known:
            raise NotFound(f"no environment {key!r} in project {project!r}")


def list_flags(plane: ControlPlane, project: str, query: FlagQuery) -> JsonObject:
    """`{items, totalCount, _links}` for one page of the project's flags, ordered by key."""
    with plane.read() as uow:
        if uow.projects.get(project) is None:
            raise NotFound(f"no project {project!r}")
        check_environments(uow, project, query.environments)
        records = uow.flags.list(project)
    matching = [record for record in records if matches(record.doc, query)]
    page = matching[query.offset : query.offset + query.limit]
    base = f"/api/v2/flags/{project}"
    return {
        "items": [
            present_flag(
                record.doc,
                project_key=project,
                environment_keys=query.environments,
                summary=query.summary,
            )
            for record in page
        ],
        "totalCount": len(matching),
        "_links": page_links(base, query.limit, query.offset, len(matching)),
    }


def page_links(base: str, limit: int, offset: int, total: int) -> JsonObject:
    """LaunchDarkly's collection links: `self`, `first`, `last`; `prev`/`next` when they exist."""

    def link(at: int) -> JsonObject:
        return {"href": f"{base}?limit={limit}&offset={at}", "type": "application/json"}

    links = {
        "self": link(offset),
        "first": link(0),
        "last": link(max(total - 1, 0) // limit * limit),
    }
    if offset > 0:
        links["prev"] = link(max(offset - limit, 0))
    if offset + limit < total:
        links["next"] = link(offset + limit)
    return links
