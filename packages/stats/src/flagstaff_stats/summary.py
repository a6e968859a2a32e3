"""Sufficient statistics of one treatment's per-unit values: what aggregation hands analysis.

A numeric metric is summarised by n, Σx and Σx²; a conversion metric is the same with 0/1
values (Σx² = Σx = conversions). CUPED adds a pre-exposure covariate: its Σ, Σ² and the cross
sum Σ x·pre. Values only: validation here, arithmetic in the method modules, no I/O.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import SupportsIndex

from flagstaff_stats.errors import InvalidSummary

# Σx² is compared with (Σx)²/n with this relative slack: both come from float sums of the same
# values, so an honest summary can fall short of the bound by rounding.
_ROUNDING = 1e-9


def _count(value: object, name: str) -> int:
    """`value` as a Python int if it is an integer of any type (not a bool), else InvalidSummary."""
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        raise InvalidSummary(f"{name} must be a non-negative integer, not {value!r}")
    return operator.index(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """n, Σx, Σx² of a treatment's per-unit values (each exposed unit; 0 if it had no event)."""

    n: int
    sum: float
    sum_squares: float

    def __post_init__(self) -> None:
        # Any integer type counts (numpy's from a data frame too); it is kept as a Python int.
        object.__setattr__(self, "n", _count(self.n, "n"))
        if self.n < 0:
            raise InvalidSummary(f"n must be a non-negative integer, not {self.n!r}")
        if not (math.isfinite(self.sum) and math.isfinite(self.sum_squares)):
            raise InvalidSummary("sum and sum_squares must be finite")
        if self.n == 0 and (self.sum != 0 or self.sum_squares != 0):
            raise InvalidSummary("a summary of no units has sum and sum_squares 0")
        if self.sum_squares < 0:
            raise InvalidSummary("sum_squares cannot be negative")
        if self.n > 0:
            bound = self.sum * self.sum / self.n
            if self.sum_squares < bound - _ROUNDING * max(bound, 1.0):
                raise InvalidSummary(
                    f"sum_squares {self.sum_squares!r} is below sum²/n = {bound!r}: "
                    "no values have these sums"
                )

    @classmethod
    def of_values(cls, values: Iterable[float]) -> Summary:
        """The summary of per-unit values given one by one (tests, small data)."""
        n, total, squares = 0, 0.0, 0.0
        for value in values:
            n += 1
            total += value
            squares += value * value
        return cls(n=n, sum=total, sum_squares=squares)

    @classmethod
    def of_conversions(cls, *, units: int, converted: int) -> Summary:
        """A conversion metric: `converted` of `units` exposed units converted (values 0 or 1)."""
        converted = _count(converted, "converted")
        units = _count(units, "units")
        if not 0 <= converted <= units:
            raise InvalidSummary(
                f"converted must be between 0 and units ({units}), not {converted}"
            )
        return cls(n=units, sum=float(converted), sum_squares=float(converted))

    @property
    def mean(self) -> float:
        """Σx/n; 0 for no units."""
        return self.sum / self.n if self.n else 0.0

    @property
    def variance(self) -> float:
        """Sample variance (Σx² − (Σx)²/n)/(n − 1), floored at 0; 0 for fewer than two units."""
        if self.n < 2:
            return 0.0
        return max(0.0, (self.sum_squares - self.sum * self.sum / self.n) / (self.n - 1))

    @property
    def std_dev(self) -> float:
        """√variance."""
        return math.sqrt(self.variance)

    def merged(self, other: Summary) -> Summary:
        """The summary of both sets of units (sums add: aggregation can run incrementally)."""
        return Summary(
            n=self.n + other.n,
            sum=self.sum + other.sum,
            sum_squares=self.sum_squares + other.sum_squares,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CovariateSummary:
    """A treatment's outcome (`post`) with a pre-exposure covariate (`pre`) of the same units, and
    the cross sum Σ post·pre: the sufficient statistics of CUPED (`cuped`)."""

    post: Summary
    pre: Summary
    cross_sum: float

    def __post_init__(self) -> None:
        if self.post.n != self.pre.n:
            raise InvalidSummary(
                f"outcome and covariate must cover the same units ({self.post.n} != {self.pre.n})"
            )
        if not math.isfinite(self.cross_sum):
            raise InvalidSummary("cross_sum must be finite")
        # Cauchy–Schwarz on the centred values: |cov| ≤ sd_post·sd_pre.
        n = self.post.n
        if n > 1:
            centred = self.cross_sum - self.post.sum * self.pre.sum / n
            post_ss = self.post.sum_squares - self.post.sum * self.post.sum / n
            pre_ss = self.pre.sum_squares - self.pre.sum * self.pre.sum / n
            bound = math.sqrt(max(post_ss, 0.0) * max(pre_ss, 0.0))
            scale = max(abs(self.cross_sum), self.post.sum_squares, self.pre.sum_squares, 1.0)
            if abs(centred) > bound + _ROUNDING * scale:
                raise InvalidSummary("cross_sum is outside what the two summaries allow")

    @classmethod
    def of_pairs(cls, pairs: Iterable[tuple[float, float]]) -> CovariateSummary:
        """The summary of (post, pre) value pairs given one by one (tests, small data)."""
        posts: list[float] = []
        pres: list[float] = []
        cross = 0.0
        for post, pre in pairs:
            posts.append(post)
            pres.append(pre)
            cross += post * pre
        return cls(post=Summary.of_values(posts), pre=Summary.of_values(pres), cross_sum=cross)

    @property
    def covariance(self) -> float:
        """Sample covariance (Σ post·pre − Σpost·Σpre/n)/(n − 1); 0 for fewer than two units."""
        n = self.post.n
        if n < 2:
            return 0.0
        return (self.cross_sum - self.post.sum * self.pre.sum / n) / (n - 1)

    def merged(self, other: CovariateSummary) -> CovariateSummary:
        """The summary of both sets of units."""
        return CovariateSummary(
            post=self.post.merged(other.post),
            pre=self.pre.merged(other.pre),
            cross_sum=self.cross_sum + other.cross_sum,
        )
