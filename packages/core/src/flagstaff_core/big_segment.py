"""The port through which evaluation asks who belongs to a big (unbounded) segment.

Only the Protocol lives here; stores (Redis, DynamoDB, ...) belong to the SDK or the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from flagstaff_core.reason import BigSegmentsStatus


class BigSegmentMembership(Protocol):
    """Answers membership queries for big segments, keyed by a context key."""

    def membership(self, context_key: str) -> tuple[Mapping[str, bool] | None, BigSegmentsStatus]:
        """Memberships of the context with this key, and the store's status.

        The mapping's keys are segment references `"<segmentKey>.g<generation>"`; True means
        included, False excluded, absent means "fall through to the segment's rules". Hashing the
        key for the store (base64 of SHA-256) is the implementation's job.
        """
        ...
