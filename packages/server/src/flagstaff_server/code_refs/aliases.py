"""Aliases of a flag key: the same words in another naming convention (`new-checkout` is
`newCheckout`, `NewCheckout`, `new_checkout`, `NEW_CHECKOUT`, ...), as `ld-find-code-refs`
generates them, and literal aliases given per key. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

CONVENTIONS = ("camelcase", "pascalcase", "snakecase", "uppersnakecase", "kebabcase", "dotcase")
DEFAULT_CONVENTIONS = ("camelcase", "snakecase", "uppersnakecase")
"""What `flagstaff code-refs` looks for when the configuration names no aliases."""

_WORD = re.compile(r"[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")


def words(key: str) -> list[str]:
    """The words of a key: split at '-', '_', '.', and where the case changes."""
    return [w.lower() for w in _WORD.findall(key)]


def convert(key: str, convention: str) -> str:
    parts = words(key)
    if not parts:
        return key
    if convention == "camelcase":
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if convention == "pascalcase":
        return "".join(p.capitalize() for p in parts)
    if convention == "snakecase":
        return "_".join(parts)
    if convention == "uppersnakecase":
        return "_".join(parts).upper()
    if convention == "kebabcase":
        return "-".join(parts)
    if convention == "dotcase":
        return ".".join(parts)
    raise ValueError(f"unknown alias convention {convention!r}")


def aliases_of(
    key: str, conventions: Iterable[str], literal: Mapping[str, Iterable[str]] | None = None
) -> list[str]:
    """The key's aliases in the given conventions plus its literal ones, without the key itself
    and without repeats, in a stable order."""
    found: list[str] = []
    for alias in [*(convert(key, c) for c in conventions), *((literal or {}).get(key, ()))]:
        if alias != key and alias not in found:
            found.append(alias)
    return found
