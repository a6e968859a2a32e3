"""The probability distributions the methods read: normal, Student's t, chi-squared and beta,
as plain float functions over scipy's special functions (Cephes/Boost), so the method modules
stay typed arithmetic and never touch arrays.
"""

from __future__ import annotations

import math

from scipy import special


def normal_cdf(x: float) -> float:
    """Φ(x)."""
    return float(special.ndtr(x))


def normal_sf(x: float) -> float:
    """1 − Φ(x), exact in the upper tail."""
    return float(special.ndtr(-x))


def normal_pdf(x: float) -> float:
    """φ(x) = exp(−x²/2)/√(2π)."""
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def normal_quantile(p: float) -> float:
    """Φ⁻¹(p)."""
    return float(special.ndtri(p))


def student_t_sf(t: float, degrees_of_freedom: float) -> float:
    """P(T > t) for Student's t; the normal tail for infinite degrees of freedom."""
    if math.isinf(degrees_of_freedom):
        return normal_sf(t)
    return float(special.stdtr(degrees_of_freedom, -t))


def student_t_quantile(p: float, degrees_of_freedom: float) -> float:
    """The p-quantile of Student's t."""
    if math.isinf(degrees_of_freedom):
        return normal_quantile(p)
    return float(special.stdtrit(degrees_of_freedom, p))


def chi_squared_sf(x: float, degrees_of_freedom: int) -> float:
    """P(X > x) for the chi-squared distribution."""
    return float(special.chdtrc(degrees_of_freedom, x))


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    return float(special.betainc(a, b, x))


def beta_quantile(p: float, a: float, b: float) -> float:
    """The p-quantile of Beta(a, b)."""
    return float(special.betaincinv(a, b, p))
