"""Which direction is good for a metric: LaunchDarkly's `successCriteria` values."""

from __future__ import annotations

import enum


class SuccessCriterion(enum.Enum):
    """Whether a treatment wins by a higher or a lower value than the baseline's."""

    HIGHER_THAN_BASELINE = "HigherThanBaseline"
    LOWER_THAN_BASELINE = "LowerThanBaseline"

    @property
    def sign(self) -> float:
        """+1 when higher is better, −1 when lower is: multiply a difference by it to get a gain."""
        return 1.0 if self is SuccessCriterion.HIGHER_THAN_BASELINE else -1.0
