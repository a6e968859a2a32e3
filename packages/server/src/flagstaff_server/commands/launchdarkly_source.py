"""Reading one LaunchDarkly account (or anything answering LaunchDarkly's REST API v2, Flagstaff
included) for `flagstaff migrate launchdarkly`: projects, environments, flags with every
environment's targeting, segments, context kinds. Reads only; every list is paged to its end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from flagstaff_server.commands import api_client
from flagstaff_server.commands.error import CommandError

PAGE = 100
MAX_PAGES = 10_000  # a bound on any one listing: a million items


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceProject:
    project: dict[str, Any]
    environments: list[dict[str, Any]]
    flags: list[dict[str, Any]]
    segments: dict[str, list[dict[str, Any]]]  # by environment key
    context_kinds: list[dict[str, Any]] | None  # None: the source has no context-kinds API

    @property
    def key(self) -> str:
        return str(self.project["key"])


def paged(client: httpx.Client, path: str, params: dict[str, Any] | None = None) -> list[Any]:
    items: list[Any] = []
    for _ in range(MAX_PAGES):
        page = api_client.request(
            client, "GET", path, params={**(params or {}), "limit": PAGE, "offset": len(items)}
        )
        batch = page.get("items", []) if isinstance(page, dict) else []
        items += batch
        if not batch or len(items) >= int(page.get("totalCount", len(items))):
            return items
    raise CommandError(f"{path} kept answering pages past {MAX_PAGES * PAGE} items")


def project_keys(client: httpx.Client, only: str | None) -> list[str]:
    keys = [str(item["key"]) for item in paged(client, "/api/v2/projects")]
    if only is None:
        return sorted(keys)
    if only not in keys:
        raise CommandError(f"--project {only!r}: the source has no such project")
    return [only]


def read_project(client: httpx.Client, key: str) -> SourceProject:
    project = api_client.request(client, "GET", f"/api/v2/projects/{key}")
    environments = paged(client, f"/api/v2/projects/{key}/environments")
    # summary=0: LaunchDarkly leaves targeting out of listed flags unless asked
    flags = paged(client, f"/api/v2/flags/{key}", {"summary": "0"})
    listed = {flag["key"] for flag in flags}
    archived = paged(client, f"/api/v2/flags/{key}", {"summary": "0", "archived": "true"})
    flags += [flag for flag in archived if flag["key"] not in listed]
    segments = {
        str(env["key"]): paged(client, f"/api/v2/segments/{key}/{env['key']}")
        for env in environments
    }
    return SourceProject(
        project=project,
        environments=environments,
        flags=flags,
        segments=segments,
        context_kinds=read_context_kinds(client, key),
    )


def read_context_kinds(client: httpx.Client, key: str) -> list[dict[str, Any]] | None:
    try:
        answer = api_client.request(client, "GET", f"/api/v2/projects/{key}/context-kinds")
    except api_client.ApiRefused as exc:
        if exc.status == 404:
            return None
        raise
    return list(answer.get("items", [])) if isinstance(answer, dict) else []
