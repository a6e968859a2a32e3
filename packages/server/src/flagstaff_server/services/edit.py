"""What a PATCH asks for, independent of HTTP: a JSON Patch, a JSON Merge Patch or a semantic
patch, with its comment and the version the caller expects. Parses bodies into `EditRequest`;
applying an edit belongs to the flag and segment use cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain import parse_patch_body
from flagstaff_server.errors import InvalidInput, ValidationError


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
    if not isinstance(body, dict):
        raise InvalidInput(
            'a semantic patch is an object {"comment", "environmentKey", "instructions"}', path=""
        )
    comment = body.get("comment")
    if comment is not None and not isinstance(comment, str):
        raise ValidationError("'comment' must be a string", path="/comment")
    environment_key = body.get("environmentKey")
    if environment_key is not None and not isinstance(environment_key, str):
        raise ValidationError("'environmentKey' must be a string", path="/environmentKey")
    instructions = body.get("instructions")
    if not isinstance(instructions, list) or not instructions:
        raise ValidationError(
            "a semantic patch needs a non-empty 'instructions' array", path="/instructions"
        )
    for index, instruction in enumerate(instructions):
        if not isinstance(instruction, dict) or not isinstance(instruction.get("kind"), str):
            raise ValidationError(
                "each instruction is an object with a string 'kind'",
                path=f"/instructions/{index}",
            )
    return EditRequest(
        edit=SemanticPatch(instructions=instructions, environment_key=environment_key),
        comment=comment,
        body=body,
        expected_version=expected_version,
    )
