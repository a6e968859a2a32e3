"""Checks every document validation shares (flags, segments, clauses): names, text and tags
within their bounds, keys, optional members, attribute references, rollout weights, and how deep
a value or a whole document may nest (`nesting`). Each raises `ValidationError` with the JSON
pointer of the offending value; reads nothing but its arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from flagstaff_server.domain.document import (
    NAME_MAX_LENGTH,
    TAG_MAX_LENGTH,
    TEXT_MAX_LENGTH,
    Document,
    field,
    is_valid_key,
    require_string,
    require_strings,
    require_text,
)
from flagstaff_server.errors import ValidationError
from flagstaff_server.nesting import MAX_DEPTH, MAX_DOCUMENT_DEPTH, too_deep_message, where_too_deep

TOTAL_WEIGHT = 100_000
"""Rollout and segment-rule weights are in thousandths of a percent: 100,000 is everyone."""


def is_attribute_reference(text: str) -> bool:
    """An attribute reference: a plain name, or '/a/b' with ~0/~1 escapes and no empty parts."""
    if text == "":
        return False
    if not text.startswith("/"):
        return True
    parts = text[1:].split("/")
    return all(part != "" and not re.search(r"~(?![01])", part) for part in parts)


def check_name(value: Any, path: str) -> str:
    return require_text(value, path, NAME_MAX_LENGTH)


def check_text(value: Any, path: str) -> str:
    return require_text(value, path, TEXT_MAX_LENGTH)


def check_tags(value: Any, path: str) -> list[str]:
    tags = require_strings(value, path)
    for index, tag in enumerate(tags):
        require_text(tag, f"{path}/{index}", TAG_MAX_LENGTH)
    return tags


def check_value_depth(value: Any, path: str) -> None:
    """A stored JSON value (a variation's, a clause's) nests at most `MAX_DEPTH` deep; the error
    names the value."""
    if where_too_deep(value, MAX_DEPTH) is not None:
        raise ValidationError(f"the value is {too_deep_message(MAX_DEPTH)}", path=path)


def check_document_depth(document: Document) -> None:
    """Wherever a patch put them, members nest at most `MAX_DOCUMENT_DEPTH` deep in all."""
    place = where_too_deep(document, MAX_DOCUMENT_DEPTH)
    if place is not None:
        raise ValidationError(
            f"the document is {too_deep_message(MAX_DOCUMENT_DEPTH)} at {place}", path=place
        )


def check_key(document: Document, what: str, *, strict: bool) -> str:
    """The document's `key`; in strict mode also a valid LaunchDarkly key."""
    key = require_string(field(document, "key", ""), "/key")
    if strict and not is_valid_key(key):
        raise ValidationError(
            f"invalid {what} key {key!r}: use 1-256 letters, digits, '.', '_' or '-'", path="/key"
        )
    return key


def check_optional(
    obj: dict[str, Any], name: str, check: Callable[[Any, str], Any], path: str
) -> None:
    """`check` the member `name` of `obj` when it is present and not null."""
    if name in obj and obj[name] is not None:
        check(obj[name], f"{path}/{name}")
