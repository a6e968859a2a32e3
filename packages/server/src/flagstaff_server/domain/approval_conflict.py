"""Whether an approval request still fits the resource it was made against, pure: each
instruction touches a part of the flag (`domain.scheduled_change.touched_part`) or of the
segment; a part that changed between the state the request was reviewed against (its `base`)
and the resource as it is now is a conflict, which applying must not paper over. Changes to
other parts are not conflicts: the request applies on top of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flagstaff_server.domain.scheduled_change import touched_part

_ENVIRONMENT_FIELDS = {
    "targets": ("targets", "contextTargets"),
}
_FLAG_FIELDS = {
    "maintainer": ("maintainerId", "_maintainer", "maintainerTeamKey"),
}
_SEGMENT_PARTS = {
    "addIncludedTargets": ("included", "includedContexts"),
    "removeIncludedTargets": ("included", "includedContexts"),
    "addIncludedUsers": ("included", "includedContexts"),
    "removeIncludedUsers": ("included", "includedContexts"),
    "addExcludedTargets": ("excluded", "excludedContexts"),
    "removeExcludedTargets": ("excluded", "excludedContexts"),
    "addExcludedUsers": ("excluded", "excludedContexts"),
    "removeExcludedUsers": ("excluded", "excludedContexts"),
    "updateName": ("name",),
    "updateDescription": ("description",),
    "addTags": ("tags",),
    "removeTags": ("tags",),
}
"""Segment instructions and the fields they change; the rule instructions change `rules`,
anything else (an unknown kind) the whole segment."""


def flag_part_value(doc: Mapping[str, Any], part: str) -> Any:
    """The value of one part of a flag document (`env/E/on`, `env/E/rules/ID`, `flag/name`,
    `*` the whole flag), comparable between two versions of the flag."""
    if part == "*":
        return _without_bookkeeping(doc)
    scope, _, rest = part.partition("/")
    if scope == "flag":
        names = _FLAG_FIELDS.get(rest, (rest,))
        return [doc.get(name) for name in names]
    environment, _, item = rest.partition("/")
    config = doc.get("environments", {}).get(environment)
    if config is None:
        return None
    name, _, member = item.partition("/")
    if name == "rules" and member:
        return next((rule for rule in config.get("rules", []) if rule.get("_id") == member), None)
    if name == "prerequisites" and member:
        return next((p for p in config.get("prerequisites", []) if p.get("key") == member), None)
    return [config.get(field) for field in _ENVIRONMENT_FIELDS.get(name, (name,))]


def _without_bookkeeping(doc: Any) -> Any:
    """A flag with its version counters and times left out: they change with every edit."""
    skipped = {"_version", "version", "lastModified", "creationDate", "_lastModified"}
    if isinstance(doc, Mapping):
        return {k: _without_bookkeeping(v) for k, v in doc.items() if k not in skipped}
    if isinstance(doc, list):
        return [_without_bookkeeping(item) for item in doc]
    return doc


def segment_fields(instruction: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The segment fields an instruction changes; None: the whole segment."""
    kind = str(instruction.get("kind"))
    if kind in _SEGMENT_PARTS:
        return _SEGMENT_PARTS[kind]
    if "Rule" in kind or "Clause" in kind:
        return ("rules",)
    return None


def stale_parts(
    kind: str,
    base: Mapping[str, Any],
    current: Mapping[str, Any],
    instructions: Sequence[Mapping[str, Any]],
    environment: str,
) -> list[tuple[int, str]]:
    """`(instruction index, part)` for each instruction whose part of the resource differs
    between `base` and `current`."""
    found: list[tuple[int, str]] = []
    for index, instruction in enumerate(instructions):
        if kind == "flag":
            part = touched_part(dict(instruction), environment)
            if flag_part_value(base, part) != flag_part_value(current, part):
                found.append((index, part))
            continue
        names = segment_fields(instruction)
        if names is None:
            if _without_bookkeeping(base) != _without_bookkeeping(current):
                found.append((index, "*"))
        elif [base.get(name) for name in names] != [current.get(name) for name in names]:
            found.append((index, "/".join(names)))
    return found
