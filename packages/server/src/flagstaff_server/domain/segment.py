"""The REST segment document (one per project, environment and key) outside semantic patch:
creation from a `SegmentBody`, id filling, JSON Patch and Merge Patch with read-only fields guarded,
and response decoration. Pure; `segment_validation.validate_segment_document` checks the result.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import (
    Document,
    IdFactory,
    clone,
    field,
    is_valid_context_kind,
    pointer,
    refuse_unknown,
    require_bool,
    require_object,
    require_string,
    require_strings,
)
from flagstaff_server.domain.flag import fill_clause_ids
from flagstaff_server.domain.json_patch import apply_json_patch, apply_merge_patch, parse_pointer
from flagstaff_server.domain.validation import check_key
from flagstaff_server.errors import ValidationError

READ_ONLY_SEGMENT_FIELDS = frozenset(
    {"key", "version", "creationDate", "lastModifiedDate", "salt", "deleted", "generation"}
)
"""Members a patch may test but not change (plus every top-level member starting with '_')."""


BODY_FIELDS = frozenset({"name", "key", "description", "tags", "unbounded", "unboundedContextKind"})
"""The members of LaunchDarkly's `SegmentBody`; anything else in a create body is refused."""


def new_segment_document(body: Any, *, now_ms: int, new_id: IdFactory) -> Document:
    """A segment document from a LaunchDarkly `SegmentBody`; error paths point into the body."""
    body = require_object(body, "")
    refuse_unknown(body, BODY_FIELDS, "")
    key = check_key(body, "segment", strict=True)
    document: Document = {
        "key": key,
        "name": require_string(field(body, "name", ""), "/name"),
        "description": require_string(body.get("description") or "", "/description"),
        "tags": sorted(set(require_strings(body.get("tags") or [], "/tags"))),
        "creationDate": now_ms,
        "lastModifiedDate": now_ms,
        "included": [],
        "excluded": [],
        "includedContexts": [],
        "excludedContexts": [],
        "rules": [],
        "version": 1,
        "deleted": False,
        "salt": new_id().replace("-", ""),
        "unbounded": require_bool(body.get("unbounded", False), "/unbounded"),
        "generation": 1 if body.get("unbounded") else 0,
    }
    if body.get("unboundedContextKind") is not None:
        kind = require_string(body["unboundedContextKind"], "/unboundedContextKind")
        if not is_valid_context_kind(kind):
            raise ValidationError(f"invalid context kind {kind!r}", path="/unboundedContextKind")
        document["unboundedContextKind"] = kind
    return document


def fill_segment_ids(document: Document, *, new_id: IdFactory) -> Document:
    """Give rules and clauses lacking an `_id` a fresh one and fill LaunchDarkly's defaults."""
    result: Document = clone(document)
    for name in ("included", "excluded", "includedContexts", "excludedContexts", "rules", "tags"):
        result.setdefault(name, [])
    rules = result.get("rules")
    if isinstance(rules, list):
        for rule in rules:
            if isinstance(rule, dict):
                if not rule.get("_id"):
                    rule["_id"] = new_id()
                fill_clause_ids(rule.get("clauses"), new_id)
    return result


def apply_segment_json_patch(
    document: Document, operations: list[dict[str, Any]], *, new_id: IdFactory
) -> Document:
    """JSON Patch on a segment: read-only fields may be tested but not changed; all-or-nothing."""
    for index, operation in enumerate(operations):
        if not isinstance(operation, dict) or operation.get("op") == "test":
            continue
        for member in ("path", "from") if operation.get("op") == "move" else ("path",):
            text = operation.get(member)
            if isinstance(text, str):
                tokens = parse_pointer(text, at=f"/{index}/{member}")
                if not tokens or tokens[0] in READ_ONLY_SEGMENT_FIELDS or tokens[0].startswith("_"):
                    raise ValidationError(
                        f"patch operation {index}: {text or '/'} is read-only", path=text
                    )
    patched = apply_json_patch(document, operations)
    return fill_segment_ids(_restore(document, patched), new_id=new_id)


def apply_segment_merge_patch(
    document: Document, merge: dict[str, Any], *, new_id: IdFactory
) -> Document:
    """JSON Merge Patch on a segment; read-only members may not appear in the patch."""
    for name in merge:
        if name in READ_ONLY_SEGMENT_FIELDS or name.startswith("_"):
            raise ValidationError(f"'{name}' is read-only", path=pointer(name))
    return fill_segment_ids(_restore(document, apply_merge_patch(document, merge)), new_id=new_id)


def _restore(before: Document, after: Document) -> Document:
    for name in READ_ONLY_SEGMENT_FIELDS:
        if name in before:
            after[name] = before[name]
    return after


def present_segment(document: Document, *, project_key: str, environment_key: str) -> Document:
    """The segment as the REST API answers it, with `_links`."""
    result: Document = clone(document)
    href = f"/api/v2/segments/{project_key}/{environment_key}"
    result["_links"] = {
        "self": {"href": f"{href}/{result['key']}", "type": "application/json"},
        "parent": {"href": href, "type": "application/json"},
    }
    result.setdefault("generation", 0)
    result.setdefault("deleted", False)
    return result
