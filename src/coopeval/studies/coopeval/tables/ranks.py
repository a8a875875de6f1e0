"""Table ranks with 5 % grouping and the bold / grey emphasis rules.

Source: CoopEval (Tewolde et al., arXiv 2604.15267), docs/protocol/tables.md step 7. The LLM-average column
is never ranked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["DESCENDING_METRICS", "GROUP_TOLERANCE", "descending", "group_ranks", "is_bold", "is_grey"]

GROUP_TOLERANCE = 0.05
"""Relative gap (absolute when the group's first value is 0) that joins a value to a group."""

DESCENDING_METRICS = frozenset({"Mean", "Fitness", "NS", "WD"})
"""Metrics where larger is better; DR ranks (``DR``, ``DR_exact``) sort ascending."""


def descending(metric: str) -> bool:
    """Whether ``metric`` is sorted descending (Mean, Fitness, NS, WD) or ascending (DR ranks)."""
    return metric in DESCENDING_METRICS


def group_ranks(values: Mapping[str, float], descending: bool, tolerance: float = GROUP_TOLERANCE) -> dict[str, int]:
    """Rank table cells with 5 % grouping (docs/protocol/tables.md step 7).

    Sort the unrounded cell means (descending for Mean, Fitness, NS, WD; ascending for DR).
    Walk the sorted list: a group starts at its first value v and absorbs each following value
    w while |w − v|/|v| ≤ ``tolerance`` (|w − v| ≤ ``tolerance`` when v = 0). Everyone in a
    group gets the same rank; the next group's rank is the previous rank plus the previous
    group's size. The comparison is the plain floating-point expression, without slack.

    Parameters
    ----------
    values:
        Column (agent) → unrounded cell mean. NaN values are left out of the ranking.
    descending:
        Sort order (True: larger is better).
    tolerance:
        Grouping threshold (default 0.05).

    Returns
    -------
    dict[str, int]
        Column → rank (1 = best), for the non-NaN columns. Ties in value keep input order.
    """
    items = [(k, float(v)) for k, v in values.items() if v is not None and not math.isnan(float(v))]
    items.sort(key=lambda kv: -kv[1] if descending else kv[1])
    ranks: dict[str, int] = {}
    rank = 1
    i = 0
    while i < len(items):
        v = items[i][1]
        j = i
        while j < len(items):
            w = items[j][1]
            gap = abs(w - v)
            if (gap / abs(v) if v != 0 else gap) <= tolerance:
                j += 1
            else:
                break
        for k in range(i, j):
            ranks[items[k][0]] = rank
        rank += j - i
        i = j
    return ranks


def is_bold(rank: int | None) -> bool:
    """Bold when rank ≤ 2 (docs/protocol/tables.md step 7)."""
    return rank is not None and rank <= 2


def is_grey(rank: int | None, n: int) -> bool:
    """Greyed when rank ≥ n − 1 and n ≥ 5, n being the number of ranked columns (docs/protocol/tables.md step 7)."""
    return rank is not None and n >= 5 and rank >= n - 1
