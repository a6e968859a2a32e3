"""SHA-1 bucketing for rollouts, experiments and weighted segment rules.

A bucket is a float in [0, 1) derived from a precomputed prefix and the context's value.
"""

from __future__ import annotations

import struct
from hashlib import sha1

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
