"""Rules for the fields of projects and environments, each failure a `ValidationError` at a JSON
pointer. Used on create bodies and on the result of a PATCH alike (`patch_fields`), so both give
the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.document import (
    KEY_MAX_LENGTH,
    NAME_MAX_LENGTH,
    TEXT_MAX_LENGTH,
    is_valid_key,
)
from flagstaff_server.domain.json_patch import apply_json_patch, apply_merge_patch, parse_patch_body
from flagstaff_server.errors import ValidationError

Rule = Callable[[Any, str], Any]
"""A field rule: the checked value, or a `ValidationError` at the given JSON pointer."""

TAG_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
COLOR_PATTERN = re.compile(r"^[0-9A-Fa-f]{6}$")
# A week, in minutes: the PHP SDK's cache lifetime; longer would hide changes for too long.
DEFAULT_TTL_MAX = 7 * 24 * 60


def check_key(value: Any, path: str) -> str:
    if not is_valid_key(value):
        raise ValidationError(
            f"a key is 1 to {KEY_MAX_LENGTH} letters, digits, '.', '_' or '-'; got {value!r}",
            path=path,
        )
    key: str = value
    return key


def check_name(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > NAME_MAX_LENGTH:
        raise ValidationError(
            f"a name is a non-blank string of at most {NAME_MAX_LENGTH} characters", path=path
        )
    return value


def check_tags(value: Any, path: str) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError("tags must be an array of strings", path=path)
    for index, tag in enumerate(value):
        if not isinstance(tag, str) or not TAG_PATTERN.match(tag):
            raise ValidationError(
                "a tag is 1 to 64 letters, digits, '.', '_', ':' or '-'", path=f"{path}/{index}"
            )
    return sorted(set(value))


def check_color(value: Any, path: str) -> str:
    if not isinstance(value, str) or not COLOR_PATTERN.match(value):
        raise ValidationError("a color is six hex digits, such as 417505", path=path)
    return value


def check_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError("expected true or false", path=path)
    return value


def check_default_ttl(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= DEFAULT_TTL_MAX:
        raise ValidationError(
            f"defaultTtl is a whole number of minutes from 0 to {DEFAULT_TTL_MAX}", path=path
        )
    return value


def check_string(value: Any, path: str, *, max_length: int = TEXT_MAX_LENGTH) -> str:
    if not isinstance(value, str) or len(value) > max_length:
        raise ValidationError(f"expected a string of at most {max_length} characters", path=path)
    return value


def check_client_side_availability(value: Any, path: str) -> dict[str, bool]:
    if not isinstance(value, dict):
        raise ValidationError("expected an object {usingMobileKey, usingEnvironmentId}", path=path)
    result = {"usingMobileKey": False, "usingEnvironmentId": False}
    for name, flag in value.items():
        if name not in result:
            raise ValidationError(f"unknown field {name!r}", path=f"{path}/{name}")
        result[name] = check_bool(flag, f"{path}/{name}")
    return result


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchedFields:
    values: dict[str, Any]
    """Every editable field of the patched representation, each checked by its rule."""
    comment: str | None
    patch: Any
    """The operations (JSON Patch) or `{"merge": ...}` for the audit log."""


def patch_fields(
    before: dict[str, Any],
    body: Any,
    *,
    editable: Mapping[str, Rule],
    read_only: Collection[str],
    required: Iterable[str],
    noun: str,
) -> PatchedFields:
    """Apply a PATCH body (JSON Patch or merge patch) to the representation `before` and check
    the result: `read_only` fields unchanged, no field outside `editable`, none of `required`
    removed. `noun` names the resource in the unknown-field message."""
    request = parse_patch_body(body)
    if request.kind == "json":
        after = apply_json_patch(before, request.operations)
        patch: Any = request.operations
    else:
        after = apply_merge_patch(before, request.merge)
        patch = {"merge": request.merge}
    for name in read_only:
        if after.get(name) != before[name]:
            raise ValidationError(f"{name} is read-only", path=f"/{name}")
    values: dict[str, Any] = {}
    for name, value in after.items():
        if name in read_only:
            continue
        rule = editable.get(name)
        if rule is None:
            raise ValidationError(f"unknown {noun} field {name!r}", path=f"/{name}")
        values[name] = rule(value, f"/{name}")
    for name in required:
        if name not in values:
            raise ValidationError(f"{name} cannot be removed", path=f"/{name}")
    return PatchedFields(values=values, comment=request.comment, patch=patch)
