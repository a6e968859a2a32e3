"""Which LaunchDarkly actions an audit entry stands for, and on which resources: what a webhook's
policy filter is asked about. The entry's own action counts on the resources it changed; an
edit is also compared field by field, so a toggle in production is `updateOn` on
`proj/p:env/production:flag/k` and a rename is `updateName` on `proj/p:env/*:flag/k` (every
environment). Pure: reads the documents before and after.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import json_equal
from flagstaff_server.domain.flag_change import FlagChange, flag_change

ENVIRONMENT_PART = ":env/"
ANY_ENVIRONMENT = ":env/*:"

# Flag fields shared by every environment, and the action LaunchDarkly names for each.
FLAG_FIELD_ACTIONS: Mapping[str, str] = {
    "name": "updateName",
    "description": "updateDescription",
    "tags": "updateTags",
    "temporary": "updateTemporary",
    "deprecated": "updateDeprecated",
    "archived": "updateGlobalArchived",
    "_maintainer": "updateMaintainer",
    "maintainerId": "updateMaintainer",
    "variations": "updateFlagVariations",
    "defaults": "updateFlagDefaultVariations",
    "customProperties": "updateFlagCustomProperties",
    "clientSideAvailability": "updateClientSideFlagAvailability",
    "includeInSnippet": "updateIncludeInSnippet",
}
# Fields of one environment's configuration of a flag.
FLAG_SETTING_ACTIONS: Mapping[str, str] = {
    "on": "updateOn",
    "rules": "updateRules",
    "targets": "updateTargets",
    "contextTargets": "updateTargets",
    "fallthrough": "updateFallthrough",
    "offVariation": "updateOffVariation",
    "prerequisites": "updatePrerequisites",
    "trackEvents": "updateTrackEvents",
    "trackEventsFallthrough": "updateTrackEvents",
    "salt": "updateFlagSalt",
}
FIELD_ACTIONS: Mapping[str, Mapping[str, str]] = {
    "segment": {
        "name": "updateName",
        "description": "updateDescription",
        "tags": "updateTags",
        "included": "updateIncluded",
        "includedContexts": "updateIncluded",
        "excluded": "updateExcluded",
        "excludedContexts": "updateExcluded",
        "rules": "updateRules",
    },
    "environment": {
        "name": "updateName",
        "color": "updateColor",
        "defaultTtl": "updateTtl",
        "secureMode": "updateSecureMode",
        "defaultTrackEvents": "updateDefaultTrackEvents",
        "requireComments": "updateRequireComments",
        "confirmChanges": "updateConfirmChanges",
        "approvalSettings": "updateApprovalSettings",
        "critical": "updateCritical",
        "tags": "updateTags",
    },
    "project": {
        "name": "updateProjectName",
        "tags": "updateTags",
        "defaultClientSideAvailability": "updateDefaultClientSideAvailability",
        "includeInSnippetByDefault": "updateIncludeInSnippetByDefault",
    },
    "webhook": {
        "name": "updateName",
        "on": "updateOn",
        "url": "updateUrl",
        "sign": "updateSecret",
        "statements": "updateStatements",
        "tags": "updateTags",
    },
}
# What a creation or deletion of each kind is, in LaunchDarkly's words (imports create too).
CREATED: Mapping[str, str] = {
    "flag": "createFlag",
    "segment": "createSegment",
    "environment": "createEnvironment",
    "project": "createProject",
}
DELETED: Mapping[str, str] = {
    "flag": "deleteFlag",
    "segment": "deleteSegment",
    "environment": "deleteEnvironment",
    "project": "deleteProject",
}


@dataclass(frozen=True, slots=True)
class Access:
    action: str
    resource: str
    """A resource's text; `env/*` in a flag's stands for each of the project's environments."""


def changed_resources(resource: str, change: FlagChange | None) -> list[str]:
    """An entry's target resources: an edit of several environments' configurations of a flag
    (filed under `env/*`) names each of them; anything else names its one resource."""
    if change is None or change.flag_level or ANY_ENVIRONMENT not in resource:
        return [resource]
    return [in_environment(resource, environment) for environment in change.environments]


def in_environment(resource: str, environment: str) -> str:
    """`proj/p:env/X:flag/k` with X replaced by `environment`."""
    head, found, rest = resource.partition(ENVIRONMENT_PART)
    if not found:
        return resource
    _, colon, tail = rest.partition(":")
    return f"{head}{ENVIRONMENT_PART}{environment}{colon}{tail}"


def accesses(
    *,
    kind: str,
    resource: str,
    action: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
) -> list[Access]:
    """The (action, resource) pairs an entry stands for, each once, the entry's own first."""
    change = flag_change(dict(before), dict(after)) if kind == "flag" and before and after else None
    found = [Access(action, target) for target in changed_resources(resource, change)]
    if before is None and after is not None and kind in CREATED:
        found += [Access(CREATED[kind], target) for target in changed_resources(resource, None)]
    elif after is None and before is not None and kind in DELETED:
        found.append(Access(DELETED[kind], resource))
    elif before is not None and after is not None:
        if kind == "flag":
            found += flag_accesses(resource, before, after)
        else:
            found += [
                Access(field_action, resource)
                for field_action in changed_fields(FIELD_ACTIONS.get(kind, {}), before, after)
            ]
    return list(dict.fromkeys(found))


def flag_accesses(
    resource: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[Access]:
    every = in_environment(resource, "*")
    found = [Access(a, every) for a in changed_fields(FLAG_FIELD_ACTIONS, before, after)]
    old, new = before.get("environments") or {}, after.get("environments") or {}
    for environment in [*new, *(key for key in old if key not in new)]:
        was, now = old.get(environment) or {}, new.get(environment) or {}
        target = in_environment(resource, environment)
        found += [Access(a, target) for a in changed_fields(FLAG_SETTING_ACTIONS, was, now)]
    return found


def changed_fields(
    actions: Mapping[str, str], before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[str]:
    """The action of each field in `actions` whose value differs, in the table's order."""
    return list(
        dict.fromkeys(
            action
            for name, action in actions.items()
            if not json_equal(before.get(name), after.get(name))
        )
    )
