"""SCIM PATCH (RFC 7644 §3.5.2), pure: applies `add`, `replace` and `remove` operations to a
resource's SCIM JSON and returns the new document. Paths are `attr`, `attr.sub`, `attr[filter]`
and `attr[filter].sub`, with or without the schema URN; without a path, `add` and `replace` take an
object of attributes. Whether the result is a valid resource is the caller's check (the same one
a PUT gets); read-only attributes are refused here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.scim_error import ScimInvalid
from flagstaff_server.domain.scim_filter import (
    Compare,
    Filter,
    attribute_path,
    matches,
    parse_filter,
)

PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
OPERATIONS = frozenset({"add", "replace", "remove"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    attribute: str
    """Canonical name of the top-level attribute."""
    selector: Filter | None = None
    sub: str | None = None
    """Canonical name of the sub-attribute."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """What PATCH needs to know of a resource type: canonical names (lowercased path ->
    name), which attributes are multi-valued, which may not be written, and the schema URNs a
    path may start with."""

    names: Mapping[str, str]
    multi_valued: frozenset[str]
    read_only: frozenset[str]
    urns: tuple[str, ...]


def bad_path(message: str, at: str) -> ScimInvalid:
    return ScimInvalid(message, scim_type="invalidPath", path=at)


def parse_target(text: str, shape: Shape, at: str) -> Target:
    head, bracket, rest = text.partition("[")
    selector: Filter | None = None
    sub_text = ""
    if bracket:
        inner, closing, after = rest.rpartition("]")
        if not closing:
            raise bad_path(f"no ']' in the path {text!r}", at)
        try:
            selector = parse_filter(inner, shape.urns)
        except ScimInvalid as exc:
            raise bad_path(f"the path's filter: {exc.message}", at) from exc
        if after and not after.startswith("."):
            raise bad_path(f"unexpected {after!r} after ']'", at)
        sub_text = after[1:]
    else:
        lowered = attribute_path(head, shape.urns)
        head, _, sub_text = lowered.partition(".")
    attribute = shape.names.get(attribute_path(head, shape.urns))
    if attribute is None:
        raise bad_path(f"no attribute {text!r}", at)
    sub = None
    if sub_text:
        sub = shape.names.get(f"{attribute.lower()}.{sub_text.lower()}")
        if sub is None:
            raise bad_path(f"no attribute {text!r}", at)
    return Target(attribute=attribute, selector=selector, sub=sub)


def check_operations(body: Any) -> list[Mapping[str, Any]]:
    if not isinstance(body, dict):
        raise ScimInvalid("the body must be a PatchOp object", scim_type="invalidSyntax", path="/")
    schemas = body.get("schemas")
    if not isinstance(schemas, list) or PATCH_OP not in schemas:
        raise ScimInvalid(
            f"schemas must hold {PATCH_OP}", scim_type="invalidSyntax", path="/schemas"
        )
    operations = body.get("Operations")
    if not isinstance(operations, list) or not operations:
        raise ScimInvalid(
            "Operations must be a non-empty array", scim_type="invalidSyntax", path="/Operations"
        )
    for index, operation in enumerate(operations):
        if not isinstance(operation, dict):
            raise ScimInvalid(
                "an operation is an object", scim_type="invalidSyntax", path=f"/Operations/{index}"
            )
    return operations


def apply_patch(resource: Mapping[str, Any], body: Any, shape: Shape) -> dict[str, Any]:
    """The resource after the PatchOp `body`, all operations or none."""
    document = copy.deepcopy(dict(resource))
    for index, operation in enumerate(check_operations(body)):
        at = f"/Operations/{index}"
        op = operation.get("op")
        op = op.lower() if isinstance(op, str) else op
        if op not in OPERATIONS:
            raise ScimInvalid(
                "op is add, replace or remove", scim_type="invalidSyntax", path=f"{at}/op"
            )
        path = operation.get("path")
        value = operation.get("value")
        if path is None:
            if op == "remove":
                raise ScimInvalid("remove needs a path", scim_type="noTarget", path=f"{at}/path")
            if not isinstance(value, dict):
                raise ScimInvalid(
                    f"{op} without a path takes an object", scim_type="invalidValue", path=at
                )
            for name, item in value.items():
                target = parse_target(name, shape, f"{at}/value/{name}")
                apply_one(document, op, target, item, shape, at)
            continue
        if not isinstance(path, str):
            raise bad_path("path must be a string", f"{at}/path")
        apply_one(document, op, parse_target(path, shape, f"{at}/path"), value, shape, at)
    return document


def key_of(item: Mapping[str, Any], name: str) -> str:
    """The key `item` uses for `name` (case differs between clients)."""
    return next((key for key in item if key.lower() == name.lower()), name)


def apply_one(
    document: dict[str, Any], op: str, target: Target, value: Any, shape: Shape, at: str
) -> None:
    if target.attribute in shape.read_only:
        raise ScimInvalid(
            f"{target.attribute} is read-only", scim_type="mutability", path=f"{at}/path"
        )
    name = key_of(document, target.attribute)
    if op != "remove" and value is None:
        raise ScimInvalid(f"{op} needs a value", scim_type="invalidValue", path=f"{at}/value")
    if target.selector is None and target.sub is None:
        apply_whole(document, name, op, value, target.attribute in shape.multi_valued)
        return
    if target.selector is None:
        if target.attribute in shape.multi_valued:
            items = document.get(name) or []
            for item in items:
                set_sub(item, target.sub, op, value)
            return
        holder = document.get(name)
        if not isinstance(holder, dict):
            if op == "remove":
                return
            holder = document[name] = {}
        set_sub(holder, target.sub, op, value)
        return
    apply_selected(document, name, op, target, value, at)


def apply_whole(document: dict[str, Any], name: str, op: str, value: Any, multi: bool) -> None:
    if op == "remove":
        if multi and isinstance(value, list) and isinstance(document.get(name), list):
            unwanted = [item.get("value") for item in value if isinstance(item, dict)]
            document[name] = [
                item
                for item in document[name]
                if not (isinstance(item, dict) and item.get("value") in unwanted)
            ]
        else:
            document.pop(name, None)
        return
    if multi:
        values = value if isinstance(value, list) else [value]
        if op == "replace":
            document[name] = values
            return
        current = list(document.get(name) or [])
        document[name] = current + [item for item in values if item not in current]
        return
    if op == "add" and isinstance(value, dict) and isinstance(document.get(name), dict):
        document[name] = {**document[name], **value}
        return
    document[name] = value


def set_sub(item: Any, sub: str | None, op: str, value: Any) -> None:
    if not isinstance(item, dict) or sub is None:
        return
    if op == "remove":
        item.pop(key_of(item, sub), None)
    else:
        item[key_of(item, sub)] = value


def apply_selected(
    document: dict[str, Any], name: str, op: str, target: Target, value: Any, at: str
) -> None:
    assert target.selector is not None
    items = list(document.get(name) or [])
    chosen = [
        i
        for i, item in enumerate(items)
        if isinstance(item, dict) and matches(target.selector, item)
    ]
    if op == "remove" and target.sub is None:
        document[name] = [item for i, item in enumerate(items) if i not in chosen]
        return
    if not chosen:
        if op == "add" and target.sub is not None and isinstance(target.selector, Compare):
            selector = target.selector
            items.append({selector.path: selector.value, target.sub: value})
            document[name] = items
            return
        if op == "remove":
            return
        raise ScimInvalid(
            "no value matches the path's filter", scim_type="noTarget", path=f"{at}/path"
        )
    for index in chosen:
        if target.sub is not None:
            set_sub(items[index], target.sub, op, value)
        elif isinstance(value, dict):
            items[index] = value if op == "replace" else {**items[index], **value}
        else:
            raise ScimInvalid(
                "a selected value is replaced by an object",
                scim_type="invalidValue",
                path=f"{at}/value",
            )
    document[name] = items


__all__ = ["PATCH_OP", "Shape", "apply_patch"]
