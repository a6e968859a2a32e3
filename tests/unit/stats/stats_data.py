"""Fixed data sets for the statistics tests: seeded draws, made once per import, so every run
sees the same numbers. Each is a pair (baseline values, treatment values)."""

from __future__ import annotations

import numpy as np
from flagstaff_stats import Summary

Pair = tuple[np.ndarray, np.ndarray]


def _draw(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def numeric_pairs() -> dict[str, Pair]:
    """Named pairs covering equal and unequal sizes and spreads, skew, and conversions."""
    r = _draw(20260117)
    return {
        "normal, equal n": (r.normal(10.0, 2.0, 500), r.normal(10.3, 2.0, 500)),
        "normal, unequal n and spread": (r.normal(5.0, 1.0, 80), r.normal(5.4, 3.5, 1300)),
        "lognormal revenue": (r.lognormal(1.0, 1.2, 3000), r.lognormal(1.05, 1.2, 2900)),
        "mostly zero spend": (
            r.exponential(20.0, 4000) * (r.random(4000) < 0.05),
            r.exponential(22.0, 4100) * (r.random(4100) < 0.055),
        ),
        "conversions": (
            (r.random(6000) < 0.10).astype(float),
            (r.random(6100) < 0.11).astype(float),
        ),
        "tiny": (np.array([1.0, 2.0, 4.0]), np.array([2.0, 3.5, 3.0, 7.0])),
    }


def summary(values: np.ndarray) -> Summary:
    """The sufficient statistics of `values`."""
    return Summary(n=len(values), sum=float(values.sum()), sum_squares=float((values**2).sum()))
