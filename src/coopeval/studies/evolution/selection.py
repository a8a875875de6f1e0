"""Selection between generations (docs/protocol/evolution.md#vh-generation-loop item 3, docs/protocol/evolution.md#horibe-changes).

* V&H: top-half **truncation**: the population, shuffled by a seeded stream, sorted by score
  descending with stable ties (so equal scores survive in the shuffled order, as the protocol's
  shuffled population does, never by construction order); survivors kept unchanged.
* Horibe: **roulette** (fitness-proportional) selection, p_i = f_i / Σ_j f_j, N parents drawn
  with replacement from a seeded stream; uniform when Σ f = 0. Ranks (1 = best) are the
  places in the same shuffled stable sort.

Scores must be finite: a NaN compares false with everything, so it would pass every guard,
survive truncation and send every roulette draw to agent 0 (issue 25 kind 7).
:func:`require_finite_scores` refuses such a population before any selection, naming the agents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

Number = float | int | Fraction


SCORE_RULES = ("sum", "game2_double")


def selection_score(game1: float, game2: float, rule: str = "sum") -> float:
    """An agent's selection score from its final resources in games 1 and 2 (units): their sum
    (``"sum"``, what V&H intended and Horibe's f_i, docs/protocol/evolution.md#vh-generation-loop item 2.5, docs/protocol/evolution.md#horibe-changes), or 2 × game 2
    (``"game2_double"``, the V&H reference's bug, ``compat.vh_score_game2_only``).

    Raises
    ------
    ValueError
        An unknown rule.
    """
    if rule == "sum":
        return game1 + game2
    if rule == "game2_double":
        return 2.0 * game2
    raise ValueError(f"unknown score rule {rule!r}; use one of {SCORE_RULES}")


class NonFiniteScoreError(ValueError):
    """A selection score (or fitness) is NaN or infinite; ``agents`` names the agents concerned."""

    def __init__(self, agents: Sequence[str], values: Sequence[Number]) -> None:
        self.agents = list(agents)
        shown = ", ".join(f"{a} = {v!r}" for a, v in zip(agents, values, strict=True))
        super().__init__(
            f"selection needs finite scores; non-finite: {shown} (a failed or unplayed game left "
            "the final resources undefined; fix the scoring, do not select on it)"
        )


def require_finite_scores(scores: Sequence[Number], agents: Sequence[str] | None = None) -> None:
    """Refuse non-finite scores before selection (issue 25 kind 7).

    ``agents`` names the scores in errors (default: ``agent 0``, ``agent 1``, … by index).

    Raises
    ------
    NonFiniteScoreError
        Any score is NaN or ±inf; the message names every such agent and its value.
    ValueError
        ``agents`` and ``scores`` differ in length.
    """
    names = list(agents) if agents is not None else [f"agent {i}" for i in range(len(scores))]
    if len(names) != len(scores):
        raise ValueError(f"{len(names)} agent names for {len(scores)} scores")
    bad = [i for i, f in enumerate(scores) if not math.isfinite(float(f))]
    if bad:
        raise NonFiniteScoreError([names[i] for i in bad], [scores[i] for i in bad])


def shuffled_positions(n: int, rng: np.random.Generator) -> list[int]:
    """A seeded shuffle of ``n`` agents: ``positions[i]`` is agent ``i``'s place (0-based) in the
    shuffled population that selection sorts with stable ties (V&H docs/protocol/evolution.md#vh-generation-loop item 3, Horibe docs/protocol/evolution.md#horibe-changes)."""
    return [int(p) for p in rng.permutation(n)]


def selection_order(
    scores: Sequence[Number], positions: Sequence[int] | None = None, agents: Sequence[str] | None = None
) -> list[int]:
    """Agent indices best first: a stable sort by score, descending, of the population in its
    shuffled order (``positions`` from :func:`shuffled_positions`; population order without).

    Raises
    ------
    NonFiniteScoreError
        A NaN or infinite score (``agents`` names them in the message).
    ValueError
        ``positions`` is not a permutation.
    """
    require_finite_scores(scores, agents)
    n = len(scores)
    place = list(positions) if positions is not None else list(range(n))
    if sorted(place) != list(range(n)):
        raise ValueError(f"positions must be a permutation of 0..{n - 1}, got {place}")
    return sorted(range(n), key=lambda i: (-float(scores[i]), place[i]))


def truncation_survivors(
    scores: Sequence[Number], positions: Sequence[int] | None = None, agents: Sequence[str] | None = None
) -> list[int]:
    """Indices of the top ``len(scores) // 2`` agents of :func:`selection_order`, best first:
    equal scores survive in the order of the seeded shuffle, never by construction order.
    Non-finite scores are refused (:class:`NonFiniteScoreError`)."""
    return selection_order(scores, positions, agents)[: len(scores) // 2]


def roulette_probabilities(fitness: Sequence[Number], agents: Sequence[str] | None = None) -> list[Number]:
    """p_i = f_i / Σ_j f_j (docs/protocol/evolution.md#horibe-changes); exact for ints and Fractions. Uniform 1/N when Σ f = 0
    (:func:`roulette_is_uniform`; the offspring rows carry ``selection_fallback``).

    Raises
    ------
    NonFiniteScoreError
        A NaN or infinite fitness (``agents`` names them).
    ValueError
        An empty population or a negative fitness.
    """
    if not fitness:
        raise ValueError("roulette selection needs at least one agent")
    require_finite_scores(fitness, agents)
    if any(f < 0 for f in fitness):
        names = list(agents) if agents is not None else [f"agent {i}" for i in range(len(fitness))]
        negative = ", ".join(f"{a} = {f!r}" for a, f in zip(names, fitness, strict=True) if f < 0)
        raise ValueError(f"roulette fitness must be non-negative; negative: {negative}")
    total = sum(fitness)
    if total == 0:
        return [Fraction(1, len(fitness))] * len(fitness)
    if all(isinstance(f, (int, Fraction)) for f in fitness):
        return [Fraction(f) / Fraction(total) for f in fitness]
    return [float(f) / float(total) for f in fitness]


def roulette_is_uniform(fitness: Sequence[Number]) -> bool:
    """True when Σ f = 0, i.e. :func:`roulette_probabilities` falls back to the uniform draw
    (every agent ended with zero fitness); the fallback is flagged on the offspring's rows."""
    return bool(fitness) and sum(fitness) == 0


def roulette_draw(fitness: Sequence[Number], n: int, rng: np.random.Generator, agents: Sequence[str] | None = None) -> list[int]:
    """``n`` parent indices drawn with replacement with the roulette probabilities.

    Each draw takes one uniform ``u`` from ``rng`` and picks the first index whose cumulative
    probability exceeds ``u``; the same stream therefore always gives the same parents.
    Errors: those of :func:`roulette_probabilities` (non-finite or negative fitness).
    """
    probs = [float(p) for p in roulette_probabilities(fitness, agents)]
    cumulative = np.cumsum(probs)
    cumulative[-1] = 1.0  # guard against float shortfall
    draws = rng.random(n)
    return [int(np.searchsorted(cumulative, u, side="right")) for u in draws]


def ranks(scores: Sequence[Number], positions: Sequence[int] | None = None, agents: Sequence[str] | None = None) -> list[int]:
    """Rank of each agent in :func:`selection_order`, 1 = highest score (ties broken by the
    seeded shuffle's ``positions``, or by population order without them). Non-finite scores
    are refused (:class:`NonFiniteScoreError`)."""
    out = [0] * len(scores)
    for rank, index in enumerate(selection_order(scores, positions, agents), start=1):
        out[index] = rank
    return out
