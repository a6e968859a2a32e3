"""A guardrail metric at one look of a guarded rollout: has the new variation regressed against
the original, beyond a tolerated threshold, by an always-valid test? The rollout (hold,
proceed, roll back) is decided by its caller; this says only what the data shows.

As LaunchDarkly does since January 2026: the sequential confidence sequence (`sequential`) of
the absolute difference new − original, in the metric's unit. With the tolerated relative
regression r ≥ 0 and the original's mean μA, the bad side begins at
  −r·|μA| (higher is better: regressed when upper < −r·|μA|)
  +r·|μA| (lower is better:  regressed when lower >  r·|μA|)
A look with fewer than `minimum_units` units in either arm, or with no estimate, is INSUFFICIENT:
the caller holds instead of proceeding blind. The sequence stays valid at every look, so a
rollout may check after every batch without inflating its false rollback rate beyond α.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from flagstaff_stats.criterion import SuccessCriterion
from flagstaff_stats.difference import ArmEstimate, DifferenceKind, Shortfall, difference
from flagstaff_stats.errors import InvalidSetting
from flagstaff_stats.sequential import TUNING, SequentialResult, sequential_test
from flagstaff_stats.significance import ALPHA
from flagstaff_stats.summary import Summary

MINIMUM_UNITS = 100  # per arm; LaunchDarkly's release-policy example (its default is unpublished)


class GuardrailStatus(enum.Enum):
    """What one look at a guardrail metric shows."""

    OK = "ok"  # no regression beyond the threshold (yet): the rollout may go on
    REGRESSED = (
        "regressed"  # the whole always-valid interval is past the threshold, on the bad side
    )
    INSUFFICIENT = "insufficient"  # too few units or no estimate: hold, never proceed blind


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardrailCheck:
    """The status and the numbers it rests on (None when there was nothing to test)."""

    status: GuardrailStatus
    original_units: int
    new_units: int
    threshold: float  # the absolute difference where the bad side begins
    test: SequentialResult | None
    shortfall: Shortfall | None


def check_guardrail(
    original: Summary,
    new: Summary,
    *,
    criterion: SuccessCriterion,
    tolerance: float = 0.0,
    minimum_units: int = MINIMUM_UNITS,
    alpha: float = ALPHA,
    tuning: float = TUNING,
) -> GuardrailCheck:
    """Compare the new variation's values with the original's at this look."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise InvalidSetting(f"the tolerated regression must be ≥ 0, not {tolerance!r}")
    if minimum_units < 2:
        raise InvalidSetting("a guardrail needs a minimum of at least 2 units per arm")
    edge = -criterion.sign * tolerance * abs(original.mean)

    def check(
        status: GuardrailStatus,
        test: SequentialResult | None = None,
        shortfall: Shortfall | None = None,
    ) -> GuardrailCheck:
        return GuardrailCheck(
            status=status,
            original_units=original.n,
            new_units=new.n,
            threshold=edge,
            test=test,
            shortfall=shortfall,
        )

    if min(original.n, new.n) < minimum_units:
        return check(GuardrailStatus.INSUFFICIENT)
    measured = difference(ArmEstimate.of(original), ArmEstimate.of(new), DifferenceKind.ABSOLUTE)
    if isinstance(measured, Shortfall):
        return check(GuardrailStatus.INSUFFICIENT, shortfall=measured)
    test = sequential_test(measured, alpha=alpha, tuning=tuning)
    if criterion is SuccessCriterion.HIGHER_THAN_BASELINE:
        regressed = test.interval.upper < edge
    else:
        regressed = test.interval.lower > edge
    return check(GuardrailStatus.REGRESSED if regressed else GuardrailStatus.OK, test)
