"""The LaunchDarkly actions a JSON Patch or merge patch of a flag needs, read from the paths it
touches: `/environments/production/on` is `updateOn` in production, `/name` is `updateName` in
every environment (`env/*`). A path this table does not know needs every action of its level, so
an unlisted field can never be changed by a role that was not given everything. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from flagstaff_server.domain.audit_access import FLAG_FIELD_ACTIONS, FLAG_SETTING_ACTIONS
from flagstaff_server.domain.instruction_actions import ANY_ENVIRONMENT
from flagstaff_server.domain.policy import Resource
from flagstaff_server.domain.role_policy import in_project

ENVIRONMENTS = "environments"


def pointer_parts(pointer: str) -> list[str]:
    """RFC 6901: `/a~1b/c` is ['a/b', 'c']."""
    if not pointer:
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]


def path_actions(parts: list[str]) -> list[tuple[str, str]]:
    """(action, environment) pairs for one touched path."""
    if not parts:
        return [*every(FLAG_FIELD_ACTIONS, ANY_ENVIRONMENT), *every(FLAG_SETTING_ACTIONS, "*")]
    if parts[0] != ENVIRONMENTS:
        action = FLAG_FIELD_ACTIONS.get(parts[0])
        if action is None:
            return every(FLAG_FIELD_ACTIONS, ANY_ENVIRONMENT)
        return [(action, ANY_ENVIRONMENT)]
    environment = parts[1] if len(parts) > 1 else ANY_ENVIRONMENT
    setting = FLAG_SETTING_ACTIONS.get(parts[2]) if len(parts) > 2 else None
    if setting is None:
        return every(FLAG_SETTING_ACTIONS, environment)
    return [(setting, environment)]


def every(table: Mapping[str, str], environment: str) -> list[tuple[str, str]]:
    return [(action, environment) for action in dict.fromkeys(table.values())]


def merge_paths(merge: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterable[list[str]]:
    """The paths a merge patch sets: into `environments/<key>/` objects, else the field."""
    for name, value in merge.items():
        path = [*prefix, name]
        if isinstance(value, dict) and (
            (not prefix and name == ENVIRONMENTS) or prefix == (ENVIRONMENTS,)
        ):
            yield from merge_paths(value, tuple(path))
        else:
            yield path


def flag_edit_accesses(
    paths: Iterable[list[str]], *, project: str, key: str
) -> list[tuple[str, Resource]]:
    """Each (action, resource) the touched paths need, once, in order."""
    found: dict[tuple[str, str], Resource] = {}
    for parts in paths:
        for action, environment in path_actions(parts):
            found.setdefault((action, environment), in_project("flag", key, project, environment))
    return [(action, resource) for (action, _), resource in found.items()]


def json_patch_paths(operations: Iterable[Any]) -> list[list[str]]:
    """The paths of a JSON Patch's operations (`from` too, for move): malformed ones are left to
    the patch's own checks."""
    paths = []
    for operation in operations:
        if not isinstance(operation, dict):
            continue
        for name in ("path", "from"):
            pointer = operation.get(name)
            if isinstance(pointer, str):
                paths.append(pointer_parts(pointer))
    return paths
