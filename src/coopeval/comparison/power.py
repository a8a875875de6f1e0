"""Minimum detectable difference (MDE) of a two-sided test at a given power.

MDE = (z_{1−α/2} + z_{power}) · SE, with SE the (clustered) standard error of the estimated
difference (Bloom, "Minimum Detectable Effects", Evaluation Review 19(5), 1995; Miller, "Adding
Error Bars to Evals", arXiv 2411.00640 §5 "Power analysis"). At α = 0.05 and 80 % power the
multiplier is 1.95996 + 0.84162 = 2.80158.
"""

from __future__ import annotations

import math

from scipy.stats import norm

__all__ = ["DEFAULT_ALPHA", "DEFAULT_POWER", "mde_multiplier", "minimum_detectable_difference"]

DEFAULT_ALPHA = 0.05
"""Two-sided significance level of every comparison."""
DEFAULT_POWER = 0.8
"""Power at which the minimum detectable difference is reported."""


def mde_multiplier(alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> float:
    """z_{1−α/2} + z_{power} (standard normal quantiles).

    Raises
    ------
    ValueError
        If ``alpha`` or ``power`` is not strictly between 0 and 1.
    """
    for name, value in (("alpha", alpha), ("power", power)):
        if not (0.0 < value < 1.0):
            raise ValueError(f"{name}: {value!r} is not strictly between 0 and 1")
    return float(norm.ppf(1.0 - alpha / 2.0) + norm.ppf(power))


def minimum_detectable_difference(
    se: float | None, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> float | None:
    """The smallest true difference a two-sided level-``alpha`` test detects with ``power``.

    Parameters
    ----------
    se:
        Standard error of the difference (same units as the metric); None or non-finite gives
        None (no estimate, e.g. fewer than 2 clusters).

    Returns
    -------
    float or None
        (z_{1−α/2} + z_{power}) · se, in the metric's units.
    """
    if se is None or not math.isfinite(se):
        return None
    return mde_multiplier(alpha, power) * float(se)
