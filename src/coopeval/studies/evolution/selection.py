"""Selection between generations (evolution spec §2.2 item 3, §3.1).

* V&H: top-half **truncation** by score, descending, stable ties; survivors kept unchanged.
* Horibe: **roulette** (fitness-proportional) selection, p_i = f_i / Σ_j f_j, N parents drawn
  with replacement from a seeded stream; uniform when Σ f = 0. Ranks (1 = best) break ties with
  the seeded stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

Number = float | int | Fraction


def truncation_survivors(scores: Sequence[Number]) -> list[int]:
    """Indices of the top ``len(scores) // 2`` scores, best first; ties keep population order
    (Python's stable sort, as the reference's ``sorted(..., reverse=True)``)."""
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    return order[: len(scores) // 2]


def roulette_probabilities(fitness: Sequence[Number]) -> list[Number]:
    """p_i = f_i / Σ_j f_j (§3.1); exact for ints and Fractions. Uniform 1/N when Σ f = 0.

    Raises
    ------
    ValueError
        An empty population or a negative fitness.
    """
    if not fitness:
        raise ValueError("roulette selection needs at least one agent")
    if any(f < 0 for f in fitness):
        raise ValueError(f"fitness must be non-negative, got {list(fitness)}")
    total = sum(fitness)
    if total == 0:
        return [Fraction(1, len(fitness))] * len(fitness)
    if all(isinstance(f, (int, Fraction)) for f in fitness):
        return [Fraction(f) / Fraction(total) for f in fitness]
    return [float(f) / float(total) for f in fitness]


def roulette_draw(fitness: Sequence[Number], n: int, rng: np.random.Generator) -> list[int]:
    """``n`` parent indices drawn with replacement with the roulette probabilities.

    Each draw takes one uniform ``u`` from ``rng`` and picks the first index whose cumulative
    probability exceeds ``u``; the same stream therefore always gives the same parents.
    """
    probs = [float(p) for p in roulette_probabilities(fitness)]
    cumulative = np.cumsum(probs)
    cumulative[-1] = 1.0  # guard against float shortfall
    draws = rng.random(n)
    return [int(np.searchsorted(cumulative, u, side="right")) for u in draws]


def ranks(scores: Sequence[Number], rng: np.random.Generator | None = None) -> list[int]:
    """Rank of each agent, 1 = highest score; ties broken by a random permutation from ``rng``
    (Horibe, §3.1) or by population order without one."""
    n = len(scores)
    tiebreak = list(rng.permutation(n)) if rng is not None else list(range(n))
    order = sorted(range(n), key=lambda i: (-float(scores[i]), tiebreak[i]))
    out = [0] * n
    for rank, index in enumerate(order, start=1):
        out[index] = rank
    return out
