"""JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and LaunchDarkly's patch envelopes, applied to
a deep copy so a failing operation leaves the caller's document untouched. Generic: knows nothing of
flags; read-only fields are guarded by the flag and segment modules. Pointers and copied values
are bounded by `nesting.MAX_DOCUMENT_DEPTH`, so no sequence of operations builds a document the
(recursive) copying and comparing here cannot handle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from flagstaff_server.domain.document import Document, clone, json_equal, require_comment
from flagstaff_server.errors import InvalidInput, ValidationError, VersionConflict
from flagstaff_server.nesting import MAX_DOCUMENT_DEPTH, too_deep_message, where_too_deep

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")
VERSION_POINTERS = ("/_version", "/version")
_ARRAY_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchRequest:
    """A parsed PATCH body that is not a semantic patch."""

    kind: Literal["json", "merge"]
    operations: list[dict[str, Any]]
    merge: dict[str, Any]
    comment: str | None


def parse_pointer(text: str, *, at: str = "/path") -> list[str]:
    """Split an RFC 6901 pointer into unescaped reference tokens ("" is the whole document)."""
    if text == "":
        return []
    if not text.startswith("/"):
        raise ValidationError(f"JSON pointer '{text}' must start with '/'", path=at)
    tokens = text[1:].split("/")
    if len(tokens) > MAX_DOCUMENT_DEPTH:
        raise ValidationError(
            f"JSON pointer '{text[:100]}...' is deeper than any document may nest "
            f"({MAX_DOCUMENT_DEPTH} levels)",
            path=at,
        )
    for token in tokens:
        if re.search(r"~(?![01])", token):
            raise ValidationError(f"JSON pointer '{text}' has an invalid '~' escape", path=at)
    return [token.replace("~1", "/").replace("~0", "~") for token in tokens]


def parse_patch_body(body: Any) -> PatchRequest:
    """Accept a bare JSON Patch array, `{"comment", "patch": [...]}` or
    `{"comment", "merge": {...}}`."""
    if isinstance(body, list):
        return PatchRequest(kind="json", operations=_operations(body, "/"), merge={}, comment=None)
    if not isinstance(body, dict):
        raise InvalidInput("a PATCH body must be a JSON Patch array or an object", path="/")
    comment = require_comment(body)
    if "patch" in body:
        operations = _operations(body["patch"], "/patch")
        return PatchRequest(kind="json", operations=operations, merge={}, comment=comment)
    if "merge" in body:
        merge = body["merge"]
        if not isinstance(merge, dict):
            raise ValidationError("'merge' must be an object", path="/merge")
        return PatchRequest(kind="merge", operations=[], merge=merge, comment=comment)
    if "instructions" in body:
        raise InvalidInput(
            "this looks like a semantic patch: send it with "
            "'Content-Type: application/json; domain-model=launchdarkly.semanticpatch'",
            path="/instructions",
        )
    raise ValidationError("expected 'patch' (JSON Patch) or 'merge' (JSON Merge Patch)", path="/")


def _operations(value: Any, at: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ValidationError("a JSON Patch must be an array of operations", path=at)
    base = "" if at == "/" else at
    for index, operation in enumerate(value):
        if not isinstance(operation, dict):
            raise ValidationError(
                f"patch operation {index} must be an object", path=f"{base}/{index}"
            )
    return value


def apply_json_patch(document: Document, operations: list[dict[str, Any]]) -> Document:
    """Apply RFC 6902 operations in order to a copy; any failure raises and nothing is changed.

    A failing `test` on the document's version (`/_version` or `/version`) raises `VersionConflict`;
    every other failure is a `ValidationError` naming the operation index and its path.
    """
    result: Any = clone(document)
    for index, operation in enumerate(operations):
        result = _apply_operation(result, operation, index)
    if not isinstance(result, dict):
        raise ValidationError("the patch replaced the document with a non-object", path="")
    return result


def _apply_operation(document: Any, operation: Any, index: int) -> Any:
    if not isinstance(operation, dict):
        raise ValidationError(f"patch operation {index} must be an object", path=f"/{index}")
    op = operation.get("op")
    if op not in OPERATIONS:
        raise ValidationError(
            f"patch operation {index}: unknown op {op!r} (expected one of {', '.join(OPERATIONS)})",
            path=f"/{index}/op",
        )
    path = operation.get("path")
    if not isinstance(path, str):
        raise ValidationError(
            f"patch operation {index} ({op}): 'path' must be a string", path=f"/{index}/path"
        )
    tokens = parse_pointer(path, at=f"/{index}/path")
    context = _Context(index=index, op=op, path=path)
    if op in ("add", "replace", "test") and "value" not in operation:
        raise ValidationError(f"{context}: 'value' is required", path=f"/{index}/value")
    if op == "add":
        return _add(document, tokens, clone(operation["value"]), context)
    if op == "remove":
        return _remove(document, tokens, context)[0]
    if op == "replace":
        return _replace(document, tokens, clone(operation["value"]), context)
    if op == "test":
        actual = _resolve(document, tokens, context)
        if not json_equal(actual, operation["value"]):
            message = f"{context}: value is {actual!r}, not {operation['value']!r}"
            if path in VERSION_POINTERS:
                raise VersionConflict(message, path=path)
            raise ValidationError(message, path=path)
        return document
    source = operation.get("from")
    if not isinstance(source, str):
        raise ValidationError(f"{context}: 'from' must be a string", path=f"/{index}/from")
    from_tokens = parse_pointer(source, at=f"/{index}/from")
    found = _resolve(document, from_tokens, context, pointer_text=source)
    if where_too_deep(found, MAX_DOCUMENT_DEPTH) is not None:
        raise ValidationError(
            f"{context}: the value at '{source}' is {too_deep_message(MAX_DOCUMENT_DEPTH)}",
            path=f"/{index}/from",
        )
    value = clone(found)
    if op == "move":
        if tokens[: len(from_tokens)] == from_tokens and len(tokens) > len(from_tokens):
            raise ValidationError(f"{context}: cannot move a value into itself", path=path)
        document = _remove(document, from_tokens, context)[0]
    return _add(document, tokens, value, context)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    index: int
    op: str
    path: str

    def __str__(self) -> str:
        return f"patch operation {self.index} ({self.op} {self.path or '/'})"


def _resolve(
    document: Any, tokens: list[str], context: _Context, *, pointer_text: str | None = None
) -> Any:
    current = document
    for depth, token in enumerate(tokens):
        current = _child(current, token, context, tokens[: depth + 1], pointer_text)
    return current


def _child(
    container: Any, token: str, context: _Context, walked: list[str], pointer_text: str | None
) -> Any:
    where = pointer_text if pointer_text is not None else context.path
    if isinstance(container, dict):
        if token not in container:
            raise ValidationError(f"{context}: '{where}' does not exist", path=where)
        return container[token]
    if isinstance(container, list):
        position = _existing_index(container, token, context, where)
        return container[position]
    raise ValidationError(f"{context}: '{where}' does not exist (not a container)", path=where)


def _existing_index(container: list[Any], token: str, context: _Context, where: str) -> int:
    if not _ARRAY_INDEX.match(token) or int(token) >= len(container):
        raise ValidationError(f"{context}: array index '{token}' is out of range", path=where)
    return int(token)


def _add(document: Any, tokens: list[str], value: Any, context: _Context) -> Any:
    if not tokens:
        return value
    parent = _resolve(document, tokens[:-1], context)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif _ARRAY_INDEX.match(last) and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise ValidationError(
                f"{context}: array index '{last}' is out of range", path=context.path
            )
    else:
        raise ValidationError(
            f"{context}: parent of '{context.path}' is not a container", path=context.path
        )
    return document


def _replace(document: Any, tokens: list[str], value: Any, context: _Context) -> Any:
    if not tokens:
        return value
    parent = _resolve(document, tokens[:-1], context)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise ValidationError(f"{context}: '{context.path}' does not exist", path=context.path)
        parent[last] = value
    elif isinstance(parent, list):
        parent[_existing_index(parent, last, context, context.path)] = value
    else:
        raise ValidationError(
            f"{context}: parent of '{context.path}' is not a container", path=context.path
        )
    return document


def _remove(document: Any, tokens: list[str], context: _Context) -> tuple[Any, Any]:
    if not tokens:
        raise ValidationError(f"{context}: cannot remove the whole document", path=context.path)
    parent = _resolve(document, tokens[:-1], context)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise ValidationError(f"{context}: '{context.path}' does not exist", path=context.path)
        return document, parent.pop(last)
    if isinstance(parent, list):
        return document, parent.pop(_existing_index(parent, last, context, context.path))
    raise ValidationError(
        f"{context}: parent of '{context.path}' is not a container", path=context.path
    )


def apply_merge_patch(document: Document, merge: dict[str, Any]) -> Document:
    """RFC 7386: objects merge recursively, `null` removes a member, anything else replaces."""
    result = _merge(clone(document), merge)
    if not isinstance(result, dict):
        raise ValidationError("the merge patch replaced the document with a non-object", path="")
    return result


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return clone(patch)
    if not isinstance(target, dict):
        target = {}
    for name, value in patch.items():
        if value is None:
            target.pop(name, None)
        else:
            target[name] = _merge(target.get(name), value)
    return target
