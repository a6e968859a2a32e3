"""The (action, resource) pairs a flag or segment PATCH needs, whatever its format: a semantic
patch by its instructions, a JSON Patch or merge patch by the paths it touches. The decision is
`access.authorize_accesses`; this module only reads the edit.
"""

from __future__ import annotations

from flagstaff_server.domain.audit_access import FIELD_ACTIONS
from flagstaff_server.domain.instruction_actions import (
    flag_patch_accesses,
    segment_patch_accesses,
)
from flagstaff_server.domain.patch_actions import (
    flag_edit_accesses,
    json_patch_paths,
    merge_paths,
)
from flagstaff_server.domain.policy import Resource
from flagstaff_server.domain.role_policy import in_project
from flagstaff_server.services.edit import Edit, JsonPatch, MergePatch, SemanticPatch

Accesses = list[tuple[str, Resource]]


def flag_edit_needs(edit: Edit, *, project: str, key: str) -> Accesses:
    if isinstance(edit, SemanticPatch):
        return flag_patch_accesses(
            edit.instructions, project=project, environment=edit.environment_key, key=key
        )
    paths = json_patch_paths(edit.operations) if isinstance(edit, JsonPatch) else []
    if isinstance(edit, MergePatch):
        paths = list(merge_paths(edit.merge))
    return flag_edit_accesses(paths, project=project, key=key)


def segment_edit_needs(edit: Edit, *, project: str, environment: str, key: str) -> Accesses:
    if isinstance(edit, SemanticPatch):
        return segment_patch_accesses(
            edit.instructions, project=project, environment=environment, key=key
        )
    fields = FIELD_ACTIONS["segment"]
    paths = (
        json_patch_paths(edit.operations)
        if isinstance(edit, JsonPatch)
        else [[name] for name in edit.merge]
    )
    resource = in_project("segment", key, project, environment)
    actions: dict[str, None] = {}
    for parts in paths:
        known = fields.get(parts[0]) if parts else None
        for action in [known] if known else fields.values():
            actions.setdefault(action)
    return [(action, resource) for action in actions]
