"""What a paired comparison can claim: significant, not significant, untestable at its size, or stable.

One rule, used by the store's ``comparisons`` notes (:func:`coopeval.comparison.record.corrected`),
``coopeval compare`` and the explorer's model-against-model page (docs/comparisons.md#what-a-row-can-claim):

* **untestable**: no p-value (fewer than 2 clusters), or K clusters so few that the exact
  sign-flip test of :mod:`coopeval.comparison.paired` cannot reach α: its smallest two-sided
  p-value is 2 / 2^K (the observed sign pattern and its mirror; Phipson & Smyth 2010), above
  α = 0.05 for K ≤ 5. A bootstrap p-value (Fitness, DR) is floored only at 1/(B + 1), so with
  K ≤ 5 clusters it can fall below anything K pairs can show; it is not read as significant.
* **stable**: the interval has zero width (every cluster gives the same difference) and the
  clusters come from one replicate: resampling cannot move Δ, but nothing was measured across
  replicates, so Δ is stable under resampling, not shown significant.
* otherwise **significant** when p after the family's correction is below α, else **not
  significant**.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.comparison.power import DEFAULT_ALPHA

__all__ = ["SIGNIFICANT", "VERDICTS", "smallest_p", "verdict"]

SIGNIFICANT = "significant"
NOT_SIGNIFICANT = "not significant"
UNTESTABLE = "untestable"
STABLE = "stable"
VERDICTS = (SIGNIFICANT, NOT_SIGNIFICANT, STABLE, UNTESTABLE)
"""The verdicts of :func:`verdict`, strongest claim first."""


def smallest_p(n_clusters: int) -> float:
    """The smallest two-sided p-value an exact sign-flip test over ``n_clusters`` pairs can
    give: 2 / 2^K (1 for K < 2)."""
    return 1.0 if n_clusters < 2 else min(1.0, 2.0 / 2.0**n_clusters)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def verdict(row: Mapping[str, Any], replicates: int | None = None, alpha: float = DEFAULT_ALPHA) -> tuple[str, str | None]:
    """(verdict, why) of one ``comparisons`` row: one of :data:`VERDICTS`, and the sentence a
    reader needs where the verdict is not read off p alone (None for a plain significant or not).

    ``row`` holds ``n_clusters`` (None: not known, so only p is read), ``ci_low``, ``ci_high``,
    ``p_adjusted`` (or ``p_value``);
    ``replicates`` is the number of replicates behind the clusters (None: not known, read as one
    when the interval has zero width).
    """
    known = row.get("n_clusters")
    k = int(known or 0)
    p = row.get("p_adjusted")
    if p is None:
        p = row.get("p_value")
    low, high = row.get("ci_low"), row.get("ci_high")
    floor = smallest_p(k)
    if p is None or (known is not None and k < 2):
        return UNTESTABLE, f"untestable: n = {_plural(k, 'cluster')}, no p-value"
    if known is not None and floor > alpha:
        below = f"; its p = {float(p):.3g} is below what {k} clusters can show" if float(p) < floor else ""
        return UNTESTABLE, (f"untestable at this size: with n = {_plural(k, 'cluster')} no test can reach p < {alpha:g}"
                            f" (the exact sign-flip test's smallest p is {floor:.3g}){below}")
    if low is not None and high is not None and low == high and (replicates is None or replicates < 2):
        one = "one replicate" if replicates == 1 else "replicates not known"
        return STABLE, (f"stable under resampling ({one}, n = {_plural(k, 'cluster')}): every cluster gives the same"
                        " difference, so the interval has zero width; the spread between replicates is not measured,"
                        " so it is not read as significant")
    return (SIGNIFICANT if float(p) < alpha else NOT_SIGNIFICANT), None
