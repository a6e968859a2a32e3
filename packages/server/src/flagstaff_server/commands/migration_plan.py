"""What `flagstaff migrate launchdarkly` must write for one environment, worked out by comparing
the source's flags and segments (as the SDK JSON they evaluate as, salts included) with what the
target already serves. Pure: no I/O; an unchanged item is never sent, so a re-run writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flagstaff_server.domain import to_sdk_flag, to_sdk_segment

# Differ between two servers without changing any evaluation.
VOLATILE = ("version",)
CONTEXT_KIND_NOTE = "context kinds are not records in Flagstaff; contexts of any kind evaluate"


@dataclass(slots=True, kw_only=True)
class EnvironmentPlan:
    environment: str
    flags: dict[str, Any] = field(default_factory=dict)  # to import: SDK JSON by key
    segments: dict[str, Any] = field(default_factory=dict)
    unchanged: int = 0

    @property
    def data(self) -> dict[str, Any]:
        return {"flags": self.flags, "segments": self.segments}

    @property
    def changes(self) -> int:
        return len(self.flags) + len(self.segments)


def comparable(item: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if name not in VOLATILE}


def plan_environment(
    environment: str,
    source_flags: list[dict[str, Any]],
    source_segments: list[dict[str, Any]],
    served: dict[str, Any],
) -> EnvironmentPlan:
    """The flags and segments of `environment` the target (serving `served`, its export) lacks
    or holds differently."""
    plan = EnvironmentPlan(environment=environment)
    served_flags = served.get("flags") or {}
    served_segments = served.get("segments") or {}
    for document in source_flags:
        if environment not in (document.get("environments") or {}):
            continue
        wanted = to_sdk_flag(document, environment)
        current = served_flags.get(document["key"])
        if current is not None and comparable(current) == comparable(wanted):
            plan.unchanged += 1
        else:
            plan.flags[document["key"]] = wanted
    for document in source_segments:
        wanted = to_sdk_segment(document)
        current = served_segments.get(document["key"])
        if current is not None and comparable(current) == comparable(wanted):
            plan.unchanged += 1
        else:
            plan.segments[document["key"]] = wanted
    return plan


def new_flag_body(document: dict[str, Any]) -> dict[str, Any]:
    """The POST that creates a flag with the source's metadata (targeting comes by import)."""
    body: dict[str, Any] = {
        "key": document["key"],
        "name": document.get("name") or document["key"],
        "description": document.get("description") or "",
        "tags": list(document.get("tags") or []),
        "temporary": bool(document.get("temporary", False)),
        "variations": [
            {
                name: variation[name]
                for name in ("value", "name", "description")
                if variation.get(name) is not None
            }
            for variation in document.get("variations", [])
        ],
    }
    if document.get("clientSideAvailability") is not None:
        body["clientSideAvailability"] = document["clientSideAvailability"]
    return body


def new_segment_body(document: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": document["key"],
        "name": document.get("name") or document["key"],
        "description": document.get("description") or "",
        "tags": list(document.get("tags") or []),
    }


def not_carried(
    project: str, flags: list[dict[str, Any]], context_kinds: list[dict[str, Any]] | None
) -> list[str]:
    """One line for each thing the target has no place for."""
    lines = [
        f"{project}: context kind {kind.get('key')!r} ({CONTEXT_KIND_NOTE})"
        for kind in context_kinds or []
    ]
    for document in flags:
        if document.get("maintainerId") or document.get("_maintainer"):
            lines.append(f"{project}/{document['key']}: maintainer (members are not migrated)")
        for env, config in (document.get("environments") or {}).items():
            if config.get("_debugEventsUntilDate") or config.get("debugEventsUntilDate"):
                lines.append(f"{project}/{document['key']}/{env}: debug events window")
    return lines
