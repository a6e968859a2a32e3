"""SHA-1 bucketing for rollouts, experiments and weighted segment rules.

A bucket is a float in [0, 1) derived from a precomputed prefix and the context's value.
"""

from __future__ import annotations

from hashlib import sha1

_SCALE = float(0xFFFFFFFFFFFFFFF)


def bucket_prefix(key: str, salt: str, seed: int | None) -> str:
    """The hash input before the context value: `"<seed>."` or `"<key>.<salt>."`."""
    if seed is not None:
        return f"{seed}."
    return f"{key}.{salt}."


def bucket(prefix: str, value: object) -> float:
    """Bucket of a context value: strings as-is, integers as decimal digits, anything else 0."""
    kind = type(value)
    if kind is str:
        text = value
    elif kind is int:
        text = str(value)
    else:
        return 0.0
    digest = sha1(f"{prefix}{text}".encode(), usedforsecurity=False).digest()
    # The first 15 hex digits of the digest are its top 60 bits.
    return (int.from_bytes(digest[:8], "big") >> 4) / _SCALE
