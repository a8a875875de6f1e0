"""Which rosters (seat-ordered tuples of agents) a match-up mechanism plays (docs/protocol/tournament.md#match-up-samples).

CoopEval (arXiv 2604.15267, §3; docs/protocol/tournament.md#matchups-and-call-counts) plays all
S^N rosters of S agents in N seats. For a game with many seats (Public Goods with N players)
that grows too fast, so a config may cap it with ``max_matchups``: when S^N exceeds the cap the
cell plays a seeded sample instead, built from whole orbits of the group that shifts agent
labels (agent i → i + j mod S) and rotates seats (seat s → s + r mod N). That group moves every
(agent, seat) pair to every other, so in any union of its orbits **every agent sits every seat
equally often**, and rosters never repeat. The sample first takes one orbit per label-shift
class of co-player multisets (a random seat order of each), which observes every cell of the
symmetric metagame tensor (docs/protocol/evaluation.md#payoff-tensor), so Mean, Fitness and
deviation ratings are all defined; when even that cover exceeds the cap it takes random orbits
instead, and only the Mean is defined (the evaluate stage says so).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from coopeval.core.rng import rng_for

__all__ = ["Roster", "is_sampled", "roster_sample", "rosters", "seat_counts"]

Roster = tuple[int, ...]
"""Agent indices (into the roster in config order), one per seat, seat 0 first."""

_RANDOM_MISSES = 1000
"""Consecutive random orbits that repeat or overflow the cap after which a random sample stops."""


def is_sampled(n_agents: int, n_seats: int, max_matchups: int | None) -> bool:
    """Whether a cell plays a sample: ``max_matchups`` is set and below S^N."""
    return max_matchups is not None and n_agents**n_seats > max_matchups


def _orbit(roster: Roster, n_agents: int) -> set[Roster]:
    """The roster's orbit under agent-label shifts and seat rotations (S to S·N rosters)."""
    n = len(roster)
    return {
        tuple((roster[(s + r) % n] + j) % n_agents for s in range(n))
        for j in range(n_agents)
        for r in range(n)
    }


def _multiset_classes(n_agents: int, n_seats: int) -> list[tuple[int, ...]]:
    """One sorted multiset (of size N over S agents) per class under agent-label shifts."""
    seen: set[tuple[int, ...]] = set()
    classes = []
    for multiset in itertools.combinations_with_replacement(range(n_agents), n_seats):
        if multiset in seen:
            continue
        classes.append(multiset)
        seen.update(tuple(sorted((a + j) % n_agents for a in multiset)) for j in range(n_agents))
    return classes


def roster_sample(n_agents: int, n_seats: int, max_matchups: int, rng: np.random.Generator) -> list[Roster]:
    """A seat-balanced sample of at most ``max_matchups`` distinct rosters (module docstring).

    Parameters
    ----------
    n_agents, n_seats:
        S ≥ 1 agents and N ≥ 2 seats.
    max_matchups:
        The cap (≥ S·N, so that one whole orbit fits).
    rng:
        The sample's random stream.

    Returns
    -------
    list[Roster]
        Sorted; each agent sits each seat the same number of times.

    Raises
    ------
    ValueError
        If ``max_matchups`` is below S·N (naming the smallest workable value).
    """
    if max_matchups < n_agents * n_seats:
        raise ValueError(
            f"max_matchups = {max_matchups} is below agents × seats = {n_agents} × {n_seats}; a seat-balanced"
            f" sample needs at least {n_agents * n_seats} match-ups"
        )
    chosen: set[Roster] = set()
    if math.comb(n_agents + n_seats - 1, n_seats) <= max_matchups:
        for multiset in _multiset_classes(n_agents, n_seats):
            order = tuple(int(a) for a in rng.permutation(multiset))
            chosen |= _orbit(order, n_agents)
    if not chosen or len(chosen) > max_matchups:
        chosen = set()
        misses = 0
        # stop when no orbit can fit (each has at least S rosters) or after a run of draws that
        # all repeat or overflow (the last few places are left empty rather than searched for)
        while max_matchups - len(chosen) >= n_agents and misses < _RANDOM_MISSES:
            orbit = _orbit(tuple(int(a) for a in rng.integers(0, n_agents, n_seats)), n_agents)
            if orbit <= chosen or len(chosen | orbit) > max_matchups:
                misses += 1
                continue
            chosen |= orbit
            misses = 0
    return sorted(chosen)


def rosters(n_agents: int, n_seats: int, max_matchups: int | None, seed: int, *position: str | int) -> list[Roster]:
    """The rosters a cell plays: all S^N (``itertools.product`` order) unless
    :func:`is_sampled`, else :func:`roster_sample` drawn from ``rng_for(seed, "rosters", *position)``."""
    if not is_sampled(n_agents, n_seats, max_matchups):
        return list(itertools.product(range(n_agents), repeat=n_seats))
    assert max_matchups is not None
    return roster_sample(n_agents, n_seats, max_matchups, rng_for(seed, "rosters", *position))


def seat_counts(sample: Sequence[Roster], n_agents: int) -> np.ndarray:
    """How often each agent sits each seat: shape (S, N)."""
    counts = np.zeros((n_agents, len(sample[0]) if sample else 0), dtype=np.int64)
    for roster in sample:
        for seat, agent in enumerate(roster):
            counts[agent, seat] += 1
    return counts
