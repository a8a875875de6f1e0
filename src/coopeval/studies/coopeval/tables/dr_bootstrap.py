"""Bootstrap replicates of the tables' deviation-rating rank (DR) per (mechanism, game).

The table's DR of an agent is the mean over replicates of its rank (1 = best, ties averaged) by
the deviation ratings of the replicate's payoff tensor (docs/protocol/tables.md step 2;
docs/protocol/evaluation.md#deviation-ratings; Marris et al. 2025, arXiv 2502.11645). Its
replicates come from the same resampling as the Fitness intervals
(:func:`coopeval.studies.coopeval.tables.bootstrap.resampled_tensors`: replicates, then
match-ups within strata of equal agent multisets, one generator per (mechanism, game)): every
drawn copy of a replicate gives one resampled tensor, its deviation ratings under the rule and
their ranks; the replicate's value is the mean of the ranks over the drawn copies.

Cost: one deviation-rating solve (a few small LPs, :func:`coopeval.evaluation.deviation.deviation_ratings`)
per drawn copy, B × replicates per (mechanism, game); equal resampled tensors (common with
scripted bots, whose payoffs do not vary) are solved once. A resample whose LPs fail is NaN and
left out of the interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from coopeval.evaluation.deviation import (
    DeviationRatingError,
    deviation_ratings,
    dr_size_problem,
    rank_with_ties,
)
from coopeval.evaluation.tensor import Observation
from coopeval.studies.coopeval.tables.bootstrap import group_rng, resampled_tensors

__all__ = ["DR_RESAMPLES", "RankReplicates", "dr_rank_replicates", "dr_replicates_by_group"]

DR_RESAMPLES = 1000
"""Bootstrap resamples of a DR comparison (each solves the deviation-rating LPs of every drawn
replicate). The smallest two-sided p-value is then 2/1 001 ≈ 0.002, so Holm can separate all six
pairs of four agents (6 · 2/1 001 ≈ 0.012 < 0.05; docs/comparisons.md)."""


@dataclass(frozen=True)
class RankReplicates:
    """Bootstrap replicates of the DR rank of one (mechanism, game).

    Attributes
    ----------
    agents:
        Agent types (sorted), the columns of ``ranks``.
    ranks:
        Shape (B, S): mean DR rank per type over the drawn replicates (1 = best), NaN in a
        resample whose LPs failed; None for one-seat data, a tensor with empty cells or one whose
        LP is too large (:func:`coopeval.evaluation.deviation.dr_size_problem`).
    solves:
        Distinct resampled tensors whose ratings were computed.
    """

    agents: tuple[str, ...]
    ranks: np.ndarray | None
    solves: int


def dr_rank_replicates(
    runs: Sequence[Sequence[Observation]], rng: np.random.Generator, *, n_resamples: int = DR_RESAMPLES,
    rule: str = "strictest",
) -> RankReplicates:
    """DR rank replicates of one (mechanism, game) from its replicates' observations.

    Parameters
    ----------
    runs:
        One observation list ``(seat agents, seat scores)`` per replicate (points).
    rng:
        The group's generator (:func:`coopeval.studies.coopeval.tables.bootstrap.group_rng`).
    n_resamples:
        Number B of resamples.
    rule:
        Deviation-rating rule (``"strictest"`` or ``"reference-vertex"``), as the table's.

    Raises
    ------
    ValueError
        On no runs, an empty run, runs with different seat counts or an unknown rule.
    """
    agents, n_runs, parts = resampled_tensors(runs, rng, n_resamples)
    if parts is None or (parts and dr_size_problem(len(agents), parts[0][1].ndim - 1) is not None):
        return RankReplicates(agents, None, 0)
    total = np.zeros((n_resamples, len(agents)))
    solved: dict[bytes, np.ndarray] = {}
    for rows, tensors in parts:
        for row, tensor in zip(rows.tolist(), tensors, strict=True):
            key = tensor.tobytes()
            if key not in solved:
                try:
                    result = deviation_ratings(tensor, rule=rule)
                    solved[key] = np.array(rank_with_ties(result.ratings, result.rating_decimals))
                except DeviationRatingError:
                    solved[key] = np.full(len(agents), np.nan)
            total[row] += solved[key]
    return RankReplicates(agents, total / n_runs, len(solved))


def dr_replicates_by_group(
    groups: Mapping[tuple[str, str], Sequence[Sequence[Observation]]], *, seed: int, n_resamples: int = DR_RESAMPLES,
    rule: str = "strictest",
) -> dict[tuple[str, str], RankReplicates]:
    """:func:`dr_rank_replicates` of every (mechanism, game), each from its own generator
    (``group_rng(seed, mechanism, game)``), so a group's replicates do not depend on the others."""
    return {key: dr_rank_replicates(runs, group_rng(seed, *key), n_resamples=n_resamples, rule=rule)
            for key, runs in groups.items()}
