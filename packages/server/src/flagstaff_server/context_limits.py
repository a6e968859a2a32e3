"""How large an evaluation context from a client may be: bytes, context kinds, members of an
object, items of an array, characters of a string and nesting depth, checked on what a request
carries (a browser's base64 path segment, a REPORT or OFREP body, the API's evaluate body) before
anything decodes or evaluates it. Pure; the walk is iterative.

These bound what one request can make evaluation do: every clause tests each item of an array
attribute, and a `matches` clause reads every character of a string (docs/client-delivery.md,
"Bounds of an evaluation request").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flagstaff_server.errors import ContentTooLarge, UriTooLong, ValidationError
from flagstaff_server.nesting import MAX_DEPTH, too_deep_message, where_too_deep


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextLimits:
    max_bytes: int = 32 * 1024
    """The context's JSON (a body, or decoded from the path). Real contexts are a few hundred
    bytes; proxies commonly cap a whole URL at 8 KiB."""
    max_kinds: int = 16
    """Contexts in a multi-context."""
    max_members: int = 256
    """Attributes of one context, and members of any object inside one."""
    max_items: int = 256
    """Items of any array: every clause on an array attribute tests each item."""
    max_string_length: int = 8 * 1024
    """Characters of any string (values and names): `matches`, `contains` read all of them."""
    max_depth: int = MAX_DEPTH
    """Nesting of an attribute value (Flagstaff's one limit for JSON values)."""


CONTEXT_LIMITS = ContextLimits()


def check_size(size: int, limits: ContextLimits = CONTEXT_LIMITS, *, field: str) -> None:
    """413 when a body of `size` bytes holding a context is over the limit (before reading on)."""
    if size > limits.max_bytes:
        raise ContentTooLarge(f"the {field} is larger than {limits.max_bytes} bytes", path=field)


def check_path_segment(segment: str, limits: ContextLimits = CONTEXT_LIMITS) -> None:
    """414 when a base64 context in the path would decode to more than the limit (before
    decoding it): base64 takes 4 characters for every 3 bytes."""
    if (len(segment) * 3) // 4 > limits.max_bytes:
        raise UriTooLong(
            f"the context in the path is larger than {limits.max_bytes} bytes; send it in a"
            " REPORT body, or send less",
            path="context",
        )


def check_context(value: Any, limits: ContextLimits = CONTEXT_LIMITS, *, at: str = "") -> None:
    """400 naming the JSON pointer (after `at`, the context's own pointer) of the first part of a
    parsed context over a limit. Anything that is not a context's shape is left to the decoder."""
    if not isinstance(value, dict):
        return
    if value.get("kind") == "multi":
        kinds = len(value) - 1
        if kinds > limits.max_kinds:
            raise ValidationError(
                f"a multi-context of {kinds} contexts: at most {limits.max_kinds}", path=at or "/"
            )
    _check_members(value, limits, at)
    depth_limit = limits.max_depth + (2 if value.get("kind") == "multi" else 1)
    deepest = where_too_deep(value, depth_limit, at)
    if deepest is not None:
        raise ValidationError(f"an attribute is {too_deep_message(limits.max_depth)}", path=deepest)


def _check_members(value: dict[str, Any], limits: ContextLimits, at: str) -> None:
    pending: list[tuple[Any, str]] = [(value, at)]
    while pending:
        node, path = pending.pop()
        if isinstance(node, dict):
            if len(node) > limits.max_members:
                raise ValidationError(
                    f"an object of {len(node)} members: at most {limits.max_members}",
                    path=path or "/",
                )
            children = []
            for name, child in node.items():
                member = f"{path}/{_token(name)}"
                if len(name) > limits.max_string_length:
                    raise ValidationError(
                        f"a name of {len(name)} characters: at most {limits.max_string_length}",
                        path=member,
                    )
                children.append((child, member))
            pending.extend(reversed(children))  # document order
        elif isinstance(node, list):
            if len(node) > limits.max_items:
                raise ValidationError(
                    f"an array of {len(node)} items: at most {limits.max_items}", path=path
                )
            pending.extend((node[i], f"{path}/{i}") for i in range(len(node) - 1, -1, -1))
        elif isinstance(node, str) and len(node) > limits.max_string_length:
            raise ValidationError(
                f"a string of {len(node)} characters: at most {limits.max_string_length}",
                path=path,
            )


def _token(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
