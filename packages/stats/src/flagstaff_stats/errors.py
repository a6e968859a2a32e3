"""The statistics engine's exception tree. Analysis itself does not raise on thin data: a
comparison that cannot be made returns a `Shortfall` (see `difference`); these are for inputs
that no data could have produced and settings outside their range.

ValueError
 └── StatsError             anything the engine rejects
      ├── InvalidSummary    sufficient statistics no data could give (n < 0, conversions > n,
      │                     Σx² < (Σx)²/n, not finite, covariate and outcome of different n)
      └── InvalidSetting    alpha outside (0, 1), tuning ≤ 0, allocation weights negative or
                            all zero, arms and weights of different length, no baseline
"""

from __future__ import annotations


class StatsError(ValueError):
    """Base of every error the statistics engine raises."""


class InvalidSummary(StatsError):
    """Sufficient statistics that cannot come from any data."""


class InvalidSetting(StatsError):
    """A setting or an argument outside its range."""
