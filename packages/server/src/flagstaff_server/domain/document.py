"""Shared vocabulary of the domain: REST documents are plain JSON dicts, ids come from an injected
factory, and the typed readers here turn wrong JSON types into `ValidationError`s with a pointer.
No I/O and no clock: callers pass `now_ms` and an id factory in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from flagstaff_server.errors import ValidationError

Document = dict[str, Any]
"""A REST document (flag or segment) as parsed JSON."""

IdFactory = Callable[[], str]
"""Returns a fresh unique id (a UUID string in production, a counter in tests)."""

KEY_PATTERN = re.compile(r"^[A-Za-z0-9._-]+$")
"""LaunchDarkly keys: letters, digits, '.', '_' and '-' (flags, segments, environments)."""

KEY_MAX_LENGTH = 256

# Bounds on text, so no name or comment is megabytes long (an audit entry shows the name of what
# changed in several sentences, and every UI list shows names).
NAME_MAX_LENGTH = 256
"""Names, and short identifiers given in a body (a rule's `ref`, a maintainer)."""
TEXT_MAX_LENGTH = 4096
"""Descriptions, comments, custom property values."""
TAG_MAX_LENGTH = 64

CONTEXT_KIND_PATTERN = re.compile(r"^[A-Za-z0-9._-]+$")


def clone(document: Any) -> Any:
    """A deep copy of parsed JSON, so edits never alias the caller's data (edits are
    all-or-nothing). Only dicts and lists are copied: JSON scalars are immutable, and walking
    them ourselves is about eight times faster than `copy.deepcopy`."""
    if isinstance(document, dict):
        return {key: clone(value) for key, value in document.items()}
    if isinstance(document, list):
        return [clone(value) for value in document]
    return document


def copy_configurations(flag: Any) -> Any:
    """A copy of a flag document for changes to its top level and to its environments'
    configurations only: those dicts are copied, deeper values (rules, targets, variations) are
    shared with `flag`. Much cheaper than `clone` where that is all that is changed."""
    result = dict(flag)
    if "environments" in result:
        result["environments"] = {
            env_key: dict(config) for env_key, config in result["environments"].items()
        }
    return result


def pointer(*parts: str | int) -> str:
    """The JSON pointer (RFC 6901) for a sequence of object keys and array indices."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def json_equal(left: Any, right: Any) -> bool:
    """JSON equality: unlike Python's `==`, `true` never equals `1`; numbers compare by value."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return type(left) is type(right) and bool(left == right)


def is_valid_key(key: object) -> bool:
    return isinstance(key, str) and 0 < len(key) <= KEY_MAX_LENGTH and bool(KEY_PATTERN.match(key))


def is_valid_context_kind(kind: object) -> bool:
    return (
        isinstance(kind, str)
        and kind not in ("kind", "multi")
        and bool(CONTEXT_KIND_PATTERN.match(kind))
    )


def require_object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError(f"expected an object at {path or '/'}", path=path)
    return value


def require_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValidationError(f"expected an array at {path}", path=path)
    return value


def require_string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"expected a string at {path}", path=path)
    return value


def require_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(f"expected a boolean at {path}", path=path)
    return value


def require_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"expected an integer at {path}", path=path)
    return value


def refuse_unknown(obj: dict[str, Any], known: Collection[str], path: str) -> None:
    """A `ValidationError` at the first member of a create body's object that is not one of
    `known`: the fields LaunchDarkly documents for it, those Flagstaff ignores included."""
    for name in obj:
        if name not in known:
            raise ValidationError(f"unknown field {name!r}", path=path + pointer(name))


def require_text(value: Any, path: str, max_length: int) -> str:
    """A string of at most `max_length` characters."""
    text = require_string(value, path)
    if len(text) > max_length:
        raise ValidationError(
            f"{path} may have at most {max_length} characters, not {len(text)}", path=path
        )
    return text


def require_comment(body: dict[str, Any]) -> str | None:
    """The optional `comment` of a patch body."""
    comment = body.get("comment")
    if comment is None:
        return None
    if not isinstance(comment, str):
        raise ValidationError("'comment' must be a string", path="/comment")
    return require_text(comment, "/comment", TEXT_MAX_LENGTH)


def require_strings(value: Any, path: str) -> list[str]:
    items = require_list(value, path)
    for index, item in enumerate(items):
        require_string(item, f"{path}/{index}")
    return items


def field(obj: dict[str, Any], name: str, path: str) -> Any:
    """A required member of a JSON object."""
    if name not in obj:
        raise ValidationError(
            f"missing required field '{name}' at {path or '/'}", path=f"{path}/{name}"
        )
    return obj[name]


def variation_values(document: Document) -> Sequence[Any]:
    return [variation.get("value") for variation in document.get("variations", [])]
