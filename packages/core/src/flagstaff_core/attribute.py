"""Attribute references: how clause attributes, bucketBy and private attributes name a value.

Parses once into a tuple of path components; must not look anything up in a context.
"""

from __future__ import annotations

import re

# A `~` must be followed by 0 or 1 inside a path component.
_BAD_ESCAPE = re.compile(r"~[^01]|~$")


def parse_reference(text: str) -> tuple[str, ...] | None:
    """Components of a reference (`name` or `/a/b` with `~0`/`~1` escapes); None when invalid."""
    if text in ("", "/"):
        return None
    if text[0] != "/":
        return (text,)
    components = text[1:].split("/")
    for component in components:
        if component == "" or _BAD_ESCAPE.search(component):
            return None
    return tuple(c.replace("~1", "/").replace("~0", "~") for c in components)


def parse_attribute(text: str, context_kind: str | None) -> tuple[str, ...] | None:
    """Components of an attribute named by data that may predate context kinds.

    Without a context kind the string is a literal top-level name, even if it starts with `/`.
    """
    if context_kind is None or context_kind == "":
        return (text,) if text != "" else None
    return parse_reference(text)


def escape_name(name: str) -> str:
    """The reference text naming the literal top-level attribute `name`."""
    if not name.startswith("/"):
        return name
    return "/" + name.replace("~", "~0").replace("/", "~1")
