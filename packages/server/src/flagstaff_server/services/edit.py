"""What a PATCH asks for, independent of HTTP: a JSON Patch, a JSON Merge Patch or a semantic
patch, with its comment and the version the caller expects. Parses bodies into `EditRequest`;
applying an edit belongs to the flag and segment use cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain import parse_patch_body, parse_semantic_patch_body


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonPatch:
    operations: list[dict[str, Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class MergePatch:
    merge: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticPatch:
    instructions: list[dict[str, Any]]
    environment_key: str | None


Edit = JsonPatch | MergePatch | SemanticPatch


@dataclass(frozen=True, slots=True, kw_only=True)
class EditRequest:
    edit: Edit
    comment: str | None
    body: Any
    """The body as received, kept for the audit log."""
    expected_version: int | None = None
    """From `If-Match`: the `_version` (flags) or `version` (segments) the caller last saw."""


def parse_edit(body: Any, *, semantic: bool, expected_version: int | None = None) -> EditRequest:
    """An `EditRequest` from a parsed PATCH body; `semantic` when the request declared
    `domain-model=launchdarkly.semanticpatch`."""
    if not semantic:
        request = parse_patch_body(body)
        edit: Edit = (
            JsonPatch(operations=request.operations)
            if request.kind == "json"
            else MergePatch(merge=request.merge)
        )
        return EditRequest(
            edit=edit, comment=request.comment, body=body, expected_version=expected_version
        )
    parsed = parse_semantic_patch_body(body)
    return EditRequest(
        edit=SemanticPatch(
            instructions=parsed.instructions, environment_key=parsed.environment_key
        ),
        comment=parsed.comment,
        body=body,
        expected_version=expected_version,
    )
