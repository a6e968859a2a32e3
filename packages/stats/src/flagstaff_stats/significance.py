"""The significance level α shared by every interval and test: one check, one default."""

from __future__ import annotations

from flagstaff_stats.errors import InvalidSetting

ALPHA = 0.05  # GrowthBook's and LaunchDarkly's documented default: 95 % intervals


def check_alpha(alpha: float) -> float:
    """`alpha` if it lies in (0, 1), else InvalidSetting."""
    if not 0 < alpha < 1:
        raise InvalidSetting(f"alpha must be between 0 and 1 (exclusive), not {alpha!r}")
    return alpha
