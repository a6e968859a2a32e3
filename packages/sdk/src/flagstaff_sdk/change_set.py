"""What a data source hands to the store: a full data set or a batch of changes, with where it
came from (FDv2 selector and basis, request time). Values only; merging lives in `merge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from flagstaff_core import Flag, Segment


@dataclass(frozen=True, slots=True)
class Selector:
    """An FDv2 selector: an opaque state string (sent back as `basis`) and its version."""

    state: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSet:
    """`full`: the complete data set (items absent from it are gone); otherwise upserts, where a
    deleted item is a tombstone (`deleted=True`) carrying the delete's version.

    `selector`: the FDv2 selector reached by applying this (None for FDv1 and local sources).
    `basis`: the selector the request was made with. `requested_at`: monotonic time the request
    that produced this began (a poll reflects the service at some moment after it).
    `authoritative`: replaces held data without freshness checks (an FDv1 stream `put`, a file,
    test data), as LaunchDarkly's SDKs treat a `put`.
    `current`: nothing to change; the service confirmed the data held is up to date.
    """

    full: bool
    flags: Mapping[str, Flag] = field(default_factory=dict)
    segments: Mapping[str, Segment] = field(default_factory=dict)
    selector: Selector | None = None
    basis: Selector | None = None
    requested_at: float = float("-inf")
    authoritative: bool = False
    current: bool = False
