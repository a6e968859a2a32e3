"""Copying a flag's configuration from one environment to another (LaunchDarkly's
`POST /api/v2/flags/{p}/{key}/copy`): promotion from staging to production, say.

Parses the `FlagCopyConfigPost` body, picks the configuration parts its actions name, and writes
through the same validated, versioned, audited path as a PATCH.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain import present_flag
from flagstaff_server.domain.document import clone, refuse_unknown, require_comment
from flagstaff_server.errors import InvalidInput, ValidationError, VersionConflict
from flagstaff_server.services import flag_listing, flags
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import JsonObject
from flagstaff_server.services.race import retry_lost_races

# LaunchDarkly's copy actions and the environment-configuration fields each one carries over.
ACTIONS: Mapping[str, tuple[str, ...]] = {
    "updateOn": ("on",),
    "updateRules": ("rules",),
    "updateFallthrough": ("fallthrough",),
    "updateOffVariation": ("offVariation",),
    "updatePrerequisites": ("prerequisites",),
    "updateTargets": ("targets", "contextTargets"),
    "updateFlagConfigMigrationSettings": ("migration",),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyRequest:
    source: str
    target: str
    source_version: int | None
    target_version: int | None
    actions: tuple[str, ...]
    comment: str | None
    body: Any


BODY_FIELDS = frozenset({"source", "target", "comment", "includedActions", "excludedActions"})
"""LaunchDarkly's `FlagCopyConfigPost`."""


def parse_copy(body: Any) -> CopyRequest:
    """A `CopyRequest` from a `FlagCopyConfigPost` body; errors name the field."""
    if not isinstance(body, dict):
        raise InvalidInput(
            "expected an object {source, target, comment?, includedActions?}", path=""
        )
    refuse_unknown(body, BODY_FIELDS, "")
    source, source_version = _environment(body, "source")
    target, target_version = _environment(body, "target")
    if source == target:
        raise ValidationError("source and target must be different environments", path="/target")
    comment = require_comment(body)
    included, excluded = body.get("includedActions"), body.get("excludedActions")
    if included is not None and excluded is not None:
        raise ValidationError(
            "give includedActions or excludedActions, not both", path="/excludedActions"
        )
    actions = tuple(ACTIONS)
    if included is not None:
        actions = _actions(included, "/includedActions")
    elif excluded is not None:
        unwanted = set(_actions(excluded, "/excludedActions"))
        actions = tuple(action for action in ACTIONS if action not in unwanted)
    return CopyRequest(
        source=source,
        target=target,
        source_version=source_version,
        target_version=target_version,
        actions=actions,
        comment=comment,
        body=body,
    )


def _environment(body: dict[str, Any], name: str) -> tuple[str, int | None]:
    given = body.get(name)
    if not isinstance(given, dict) or not isinstance(given.get("key"), str):
        raise ValidationError(f"'{name}' must be an object with a string 'key'", path=f"/{name}")
    refuse_unknown(given, ("key", "currentVersion"), f"/{name}")
    version = given.get("currentVersion")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise ValidationError("'currentVersion' must be an integer", path=f"/{name}/currentVersion")
    return given["key"], version


def _actions(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValidationError("expected an array of action names", path=path)
    for index, action in enumerate(value):
        if action not in ACTIONS:
            raise ValidationError(
                f"unknown action {action!r}; one of {', '.join(ACTIONS)}", path=f"{path}/{index}"
            )
    return tuple(value)


def copy_flag_config(
    plane: ControlPlane, actor: Actor, project: str, key: str, request: CopyRequest
) -> JsonObject:
    """Copy the chosen parts of the source environment's configuration over the target's."""
    authorize(actor, "writer", project=project, environment=request.target)
    return retry_lost_races(lambda: _copy(plane, actor, project, key, request))


def _copy(
    plane: ControlPlane, actor: Actor, project: str, key: str, request: CopyRequest
) -> JsonObject:
    with plane.write(actor) as tx:
        record = flags.get_record(tx.uow, project, key, for_update=True)
        flag_listing.check_environments(tx.uow, project, (request.source, request.target))
        configs = record.doc["environments"]
        for name, environment, version in (
            ("source", request.source, request.source_version),
            ("target", request.target, request.target_version),
        ):
            current = configs[environment].get("version")
            if version is not None and version != current:
                raise VersionConflict(
                    f"flag {key!r} is at version {current} in {environment!r}, not {version}",
                    path=f"/{name}/currentVersion",
                )
        after = clone(record.doc)
        source, target = (
            after["environments"][request.source],
            after["environments"][request.target],
        )
        for action in request.actions:
            for field in ACTIONS[action]:
                if field in source:
                    target[field] = clone(source[field])
                else:
                    target.pop(field, None)
        document = flags.commit_edit(
            tx,
            record,
            after,
            action="copyFlagConfigFrom",
            comment=request.comment,
            body=request.body,
        )
    return present_flag(document, project_key=project)
