"""The probability that each treatment is the best (LaunchDarkly's `pBest`), from the
treatments' independent posteriors (`posterior`), by one-dimensional quadrature.

P(k best) = ∫ fₖ(x) ∏ⱼ≠ₖ Fⱼ(x) dx = ∫₀¹ ∏ⱼ≠ₖ Fⱼ(Qₖ(u)) du
(higher is better; 1 − Fⱼ in the product when lower is better), substituting x = Qₖ(u), the
posterior quantile of arm k, so the integrand lives on [0, 1] whatever the scale of the
metric. QUADPACK's adaptive Gauss–Kronrod rule (scipy `quad`) integrates it, told where the
integrand steps (uⱼ = Fₖ(mean of j)); the result is deterministic, unlike a Monte Carlo draw.
Two normal arms take the closed form Φ((μB − μA)/√(σA² + σB²)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import integrate

from flagstaff_stats.criterion import SuccessCriterion
from flagstaff_stats.distribution import normal_cdf
from flagstaff_stats.posterior import NormalPosterior, Posterior

_TOLERANCE = 1e-10


def probabilities_to_be_best(
    posteriors: Sequence[Posterior], criterion: SuccessCriterion
) -> tuple[float, ...]:
    """P(arm k has the best mean) for every arm, in the order given (they add up to 1)."""
    if len(posteriors) == 1:
        return (1.0,)
    higher = criterion is SuccessCriterion.HIGHER_THAN_BASELINE
    normals = [p for p in posteriors if isinstance(p, NormalPosterior)]
    if len(posteriors) == 2 and len(normals) == 2:
        # Two normal arms: P(B > A) = Φ((μB − μA)/√(σA² + σB²)) exactly.
        first, second = normals
        gap = criterion.sign * (second.mu - first.mu)
        chance = normal_cdf(gap / math.hypot(first.sigma, second.sigma))
        return (1.0 - chance, chance)
    chances: list[float] = []
    for k, arm in enumerate(posteriors):
        others = [p for j, p in enumerate(posteriors) if j != k]

        def integrand(u: float, arm: Posterior = arm, others: list[Posterior] = others) -> float:
            x = arm.quantile(u)
            product = 1.0
            for other in others:
                below = other.cdf(x)
                product *= below if higher else 1.0 - below
            return product

        steps = sorted({min(max(arm.cdf(other.mean), 1e-12), 1 - 1e-12) for other in others})
        value, _ = integrate.quad(
            integrand, 0.0, 1.0, points=steps, limit=200, epsabs=_TOLERANCE, epsrel=_TOLERANCE
        )
        chances.append(min(1.0, max(0.0, value)))
    return tuple(chances)
