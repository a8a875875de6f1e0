"""Rounding and ranking of deviation ratings (docs/protocol/evaluation.md#deviation-ratings,
"From ratings to the table's DR"; Marris et al. 2025, arXiv 2502.11645).

Ratings are compared after rounding to 10 significant digits of the payoff scale max|M|, so a
tensor times any positive factor ranks its agents the same; ties share the average rank.
:mod:`coopeval.evaluation.deviation` computes the ratings and re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["RATING_DECIMALS", "rank_with_ties", "rating_decimals"]

RATING_DECIMALS = 10
"""Ratings are rounded to 1e−10 before reporting and ranking (docs/protocol/evaluation.md#deviation-ratings), relative to a payoff
scale max|M| in [1, 10); see :func:`rating_decimals`."""


def rating_decimals(payoff_scale: float) -> int:
    """Decimal places that keep 10 significant digits of ``payoff_scale`` (= max|M|, points).

    10 for a scale in [1, 10) (docs/protocol/evaluation.md#deviation-ratings: round to 1e−10), 22 for 1e−12, −2 for 1e12;
    10 for a scale of 0 (a constant game).

    Raises
    ------
    ValueError
        On a negative or non-finite scale.
    """
    if not (math.isfinite(payoff_scale) and payoff_scale >= 0):
        raise ValueError(f"payoff_scale: {payoff_scale!r} must be finite and non-negative")
    if payoff_scale == 0:
        return RATING_DECIMALS
    return RATING_DECIMALS - math.floor(math.log10(payoff_scale))


def rank_with_ties(ratings: Sequence[float], decimals: int = RATING_DECIMALS) -> list[float]:
    """Rank ratings descending (1 = best); ties share the average rank.

    Values equal after rounding to ``decimals`` places (default 10: 1e−10) are ties, e.g. four
    types tied at the top get 2.5 each, so the ranks always average (S + 1)/2. Source: docs/protocol/evaluation.md#deviation-ratings ("From ratings to the table's DR"). For ratings of :func:`deviation_ratings` pass its
    ``rating_decimals`` so that the ranking does not depend on the payoff scale.

    Raises
    ------
    ValueError
        On NaN or infinite ratings.
    """
    if not all(math.isfinite(r) for r in ratings):
        raise ValueError("ratings: NaN or infinite value; ratings must be finite")
    keys = [round(float(r), decimals) for r in ratings]
    order = sorted(range(len(keys)), key=lambda i: -keys[i])
    ranks = [0.0] * len(keys)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and keys[order[end + 1]] == keys[order[start]]:
            end += 1
        shared = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = shared
        start = end + 1
    return ranks
