"""Metagame payoff tensor and Mean from per-seat match scores.

An *observation* is one played matchup: ``(seat_agents, seat_scores)`` with the agent type of
each seat (seat order) and that seat's score (usually the δ-weighted average of
:func:`coopeval.evaluation.scores.discounted_average`). Source: CoopEval (Tewolde et al.,
arXiv 2604.15267), docs/protocol/evaluation.md#mean (Mean) and docs/protocol/evaluation.md#payoff-tensor (tensor pooling).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["METAGAME_MAX_CELLS", "Observation", "build_payoff_tensor", "check_payoff_span", "mean_payoff", "tensor_size_problem"]

METAGAME_MAX_CELLS = 2**20
"""Largest dense metagame tensor (S^N cells, 8 MiB of float64) that is built: 4 agents × 10
seats, or 6 × 7. Beyond it only the Mean is defined (docs/protocol/evaluation.md#n-player-metagames)."""


def tensor_size_problem(n_types: int, n_players: int) -> str | None:
    """Why the S-type, N-seat metagame tensor is not built (S^N > :data:`METAGAME_MAX_CELLS`),
    naming size, limit and fix; None when it fits."""
    cells = n_types**n_players
    if cells <= METAGAME_MAX_CELLS:
        return None
    return (
        f"metagame not evaluated: its tensor has {n_types}^{n_players} = {cells} cells, above {METAGAME_MAX_CELLS}"
        " (docs/protocol/evaluation.md#n-player-metagames); only the Mean is reported; play fewer agents or seats"
        " for Fitness and DR"
    )

Observation = tuple[tuple[str, ...], Sequence[float]]
"""One matchup: (agent type per seat, score per seat), both in seat order."""


def check_payoff_span(tensor: np.ndarray) -> None:
    """Raise if max − min of the (finite) payoffs overflows a float (spans beyond ~1.8e308).

    Payoff differences are the inputs of the replicator's advantage and of the deviation
    matrix; beyond this span they are infinite and no result is meaningful.

    Raises
    ------
    ValueError
        Naming the span, with the fix (rescale the payoffs).
    """
    with np.errstate(over="ignore"):
        span = float(np.max(tensor)) - float(np.min(tensor))
    if not math.isfinite(span):
        raise ValueError(
            f"tensor: payoffs span from {float(np.min(tensor))!r} to {float(np.max(tensor))!r},"
            " beyond the float range for their differences; divide every payoff by a common factor"
        )


def _checked(observations: Iterable[Observation]) -> list[tuple[tuple[str, ...], list[float]]]:
    checked: list[tuple[tuple[str, ...], list[float]]] = []
    for index, (seat_agents, seat_scores) in enumerate(observations):
        agents = tuple(str(a) for a in seat_agents)
        scores = [float(s) for s in seat_scores]
        if not agents:
            raise ValueError(f"observation {index}: no seats; pass one agent per seat")
        if len(agents) != len(scores):
            raise ValueError(
                f"observation {index}: {len(agents)} seat agents but {len(scores)} seat scores;"
                " pass one score per seat"
            )
        if not all(math.isfinite(s) for s in scores):
            raise ValueError(f"observation {index}: non-finite seat score {scores}")
        checked.append((agents, scores))
    return checked


def build_payoff_tensor(
    observations: Iterable[Observation], agents: Sequence[str] | None = None
) -> tuple[list[str], np.ndarray]:
    """Pool per-seat scores into the symmetric metagame tensor.

    For a matchup with seat-ordered types c = (t_1..t_N), the score of seat s is one
    observation for every cell T[perm] with perm a *distinct* permutation of c whose first
    entry is t_s (i.e. focal t_s followed by any ordering of c_{−s}). Each cell is the plain
    mean of its observations. Source: arXiv 2604.15267, docs/protocol/evaluation.md#payoff-tensor.

    Parameters
    ----------
    observations:
        Played matchups ``(seat_agents, seat_scores)``; every matchup must have the same
        number of seats N ≥ 2.
    agents:
        Agent order of the tensor axes. Default: the sorted distinct names in
        ``observations``.

    Returns
    -------
    (list[str], numpy.ndarray)
        The agent order and the tensor of shape (S,)*N (float64, points): T[i, j, …] is the
        mean payoff of a type-i player whose co-players are j, … .

    Raises
    ------
    ValueError
        On no observations, inconsistent seat counts, fewer than 2 seats, an agent missing
        from ``agents``, duplicate names in ``agents``, a tensor above
        :data:`METAGAME_MAX_CELLS`, or a cell with no observation (the message names the cell).
    """
    checked = _checked(observations)
    if not checked:
        raise ValueError("observations: empty; pass at least one played matchup")
    n_players = len(checked[0][0])
    if n_players < 2:
        raise ValueError("observations: a metagame needs at least 2 seats per matchup")
    for index, (seat_agents, _) in enumerate(checked):
        if len(seat_agents) != n_players:
            raise ValueError(
                f"observation {index}: {len(seat_agents)} seats, expected {n_players}"
                " like the first matchup"
            )
    seen = {a for seat_agents, _ in checked for a in seat_agents}
    order = sorted(seen) if agents is None else [str(a) for a in agents]
    if len(set(order)) != len(order):
        raise ValueError(f"agents: duplicate names in {order}; list each agent once")
    unknown = seen.difference(order)
    if unknown:
        raise ValueError(f"agents: observed agents {sorted(unknown)} are not in the agent list")
    position = {name: i for i, name in enumerate(order)}
    size = len(order)
    if (problem := tensor_size_problem(size, n_players)) is not None:
        raise ValueError(problem)
    shape = (size,) * n_players
    # A cell's observations are those with its focal type and its co-players' multiset, so they
    # are pooled per (focal, sorted co-players) and every ordering of the co-players reads the
    # pool: S^N cells without enumerating (N−1)! orderings per seat. Sums with math.fsum (exactly
    # rounded): the tensor does not depend on the order of the observations (play writes
    # match-ups in completion order).
    pools: dict[tuple[int, ...], list[float]] = defaultdict(list)
    for seat_agents, seat_scores in checked:
        idx = tuple(position[a] for a in seat_agents)
        for seat, score in enumerate(seat_scores):
            pools[(idx[seat], *sorted(idx[:seat] + idx[seat + 1 :]))].append(score)
    cell_means = {key: math.fsum(values) / len(values) for key, values in pools.items()}
    means = np.zeros(shape)
    observed = np.zeros(shape, dtype=bool)
    for cell in itertools.product(range(size), repeat=n_players):
        value = cell_means.get((cell[0], *sorted(cell[1:])))
        if value is not None:
            means[cell] = value
            observed[cell] = True
    if not observed.all():
        missing = tuple(int(i) for i in np.argwhere(~observed)[0])
        names = ", ".join(order[i] for i in missing)
        raise ValueError(
            f"payoff tensor cell {list(missing)} (focal {order[missing[0]]!r}; profile {names})"
            f" has no observation; {int((~observed).sum())} empty cell(s) in total"
        )
    return order, means


def mean_payoff(observations: Iterable[Observation]) -> dict[str, float]:
    """Mean per agent type, pooled over every (matchup, seat) in which it sits.

    This is the CoopEval "Mean" (``agent_average_payoff.json``): the arithmetic mean of the
    seat scores, counting self-play seats separately. One-seat observations
    ``((type,), (score,))`` are accepted, which gives the reputation Mean (per-type mean of the
    seated agents' scores). Source: arXiv 2604.15267, docs/protocol/evaluation.md#mean.

    Returns
    -------
    dict[str, float]
        Agent type → Mean (points), keys sorted by name.

    Raises
    ------
    ValueError
        On empty input, seat/score length mismatch or non-finite scores.
    """
    pooled: dict[str, list[float]] = defaultdict(list)
    for seat_agents, seat_scores in _checked(observations):
        for agent, score in zip(seat_agents, seat_scores, strict=True):
            pooled[agent].append(score)
    if not pooled:
        raise ValueError("observations: empty; pass at least one played matchup")
    # math.fsum: exactly rounded, so the Mean does not depend on the order of the observations
    return {agent: math.fsum(pooled[agent]) / len(pooled[agent]) for agent in sorted(pooled)}
