"""SHA-1 bucketing for rollouts, experiments and weighted segment rules.

A bucket is a float in [0, 1) derived from a precomputed prefix and the context's value, read by
a getter built once from the `bucketBy` attribute's parsed path.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from hashlib import sha1
from typing import Any

_SCALE = float(0xFFFFFFFFFFFFFFF)
# The first 15 hex digits of the digest are the top 60 bits of its first 8 bytes.
_FIRST_EIGHT_BYTES = struct.Struct(">Q").unpack_from


def bucket_prefix(key: str, salt: str, seed: int | None) -> str:
    """The hash input before the context value: `"<seed>."` or `"<key>.<salt>."`."""
    if seed is not None:
        return f"{seed}."
    return f"{key}.{salt}."


def bucket(prefix: str, value: object) -> float:
    """Bucket of a context value: strings as-is, integers as decimal digits, anything else 0."""
    if type(value) is str:
        text = value
    elif type(value) is int:
        text = str(value)
    else:
        return 0.0
    digest = sha1((prefix + text).encode(), usedforsecurity=False).digest()
    top: int = _FIRST_EIGHT_BYTES(digest)[0]
    return (top >> 4) / _SCALE


def value_getter(path: tuple[str, ...] | None) -> Callable[[dict[str, Any]], Any] | None:
    """Reads the value at `path` from a context kind's attributes (None: no valid path)."""
    if path is None:
        return None
    if len(path) == 1:
        (name,) = path
        return lambda attributes: attributes.get(name)
    first, rest = path[0], path[1:]

    def get(attributes: dict[str, Any]) -> Any:
        value = attributes.get(first)
        for component in rest:
            if type(value) is not dict:
                return None
            value = value.get(component)
        return value

    return get
