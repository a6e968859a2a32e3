"""Per-evaluation working state: data to resolve references, cycle guards, collected results.

Created only for flags that reference other flags or segments; never outlives one evaluation.
Lists are created on first use so a flag that only matches segments pays for none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flagstaff_core.reason import BigSegmentsStatus

if TYPE_CHECKING:
    from collections.abc import Mapping

    from flagstaff_core.big_segment import BigSegmentMembership
    from flagstaff_core.evaluation import PrerequisiteEvaluation
    from flagstaff_core.model import Flag, Segment


class MalformedFlagError(Exception):
    """Raised inside evaluation (never out of it) when data turns out malformed: a bad
    attribute reference or a prerequisite/segment cycle. The evaluator maps it to MALFORMED_FLAG.
    """


class Scope:
    __slots__ = (
        "big_segments",
        "big_segments_status",
        "flag_stack",
        "flags",
        "memberships",
        "prerequisite_keys",
        "prerequisites",
        "segment_stack",
        "segments",
    )

    def __init__(
        self,
        flags: Mapping[str, Flag],
        segments: Mapping[str, Segment],
        big_segments: BigSegmentMembership | None,
    ) -> None:
        self.flags = flags
        self.segments = segments
        self.big_segments = big_segments
        self.big_segments_status: BigSegmentsStatus | None = None
        self.memberships: dict[str, Mapping[str, bool] | None] | None = None
        # Keys of flags whose prerequisites are being checked; None until the first check, which
        # is the evaluated flag's own (so its prerequisites are the direct ones).
        self.flag_stack: list[str] | None = None
        self.prerequisites: list[PrerequisiteEvaluation] | None = None
        self.prerequisite_keys: list[str] | None = None
        self.segment_stack: list[str] | None = None
