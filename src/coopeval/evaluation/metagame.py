"""One-call metagame evaluation: Mean, replicator Fitness and deviation ratings (pure).

:func:`evaluate_metagame` reads no file. Readers of the authors' released ``matchup_payoffs.json``
live beside the rest of the reference data, in
:mod:`coopeval.studies.coopeval.reference.payoffs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coopeval.evaluation.deviation import deviation_ratings
from coopeval.evaluation.replicator import fitness, replicator_dynamics

__all__ = ["evaluate_metagame"]


def evaluate_metagame(
    agents: Sequence[str],
    tensor: np.ndarray,
    initial_population: Sequence[float] | np.ndarray | None = None,
    steps: int = 1000,
    lr: float = 0.1,
    dr_rule: str = "strictest",
) -> dict[str, Any]:
    """Evaluate a symmetric metagame: uniform-population Mean, replicator Fitness and DR.

    Source: arXiv 2604.15267, docs/protocol/evaluation.md#mean (Mean = fitness in the uniform population when every
    profile is played once), docs/protocol/evaluation.md#replicator-dynamics (replicator: constant η = ``lr``, early-stop tol 1e−6) and
    docs/protocol/evaluation.md#deviation-ratings (deviation ratings).

    Parameters
    ----------
    agents:
        Agent names in tensor-axis order, length S, distinct.
    tensor:
        Metagame tensor, shape (S,)*N with N ≥ 2 (points).
    initial_population:
        Replicator start, shape (S,); default uniform.
    steps, lr:
        Replicator steps (≥ 0) and learning rate.
    dr_rule:
        ``"strictest"`` or ``"reference-vertex"`` (alias ``"coopeval_vertex"``).

    Returns
    -------
    dict
        ``{"agents", "mean", "fitness", "final_population", "population_weighted_fitness",
        "deviation_ratings", "dr_rule"}``; per-agent values are ``{agent: float}`` dicts in
        ``agents`` order; ``dr_rule`` is the canonical rule name.

    Raises
    ------
    ValueError
        On a names/tensor mismatch or any input error of the replicator or DR functions.
    coopeval.evaluation.deviation.DeviationRatingError
        When the DR LP fails (see :func:`deviation_ratings`).
    """
    names = [str(a) for a in agents]
    t = np.asarray(tensor, dtype=float)
    if t.ndim < 2 or any(n != len(names) for n in t.shape):
        raise ValueError(
            f"tensor: shape {t.shape} does not match {len(names)} agents; expected"
            f" ({len(names)},)*N with N >= 2"
        )
    if len(set(names)) != len(names):
        raise ValueError("agents: duplicate names; list each agent once")
    start = None if initial_population is None else np.asarray(initial_population, dtype=float)
    rd = replicator_dynamics(t, initial=start, steps=steps, lr=lr)
    uniform = fitness(t, np.full(len(names), 1.0 / len(names)))
    dr = deviation_ratings(t, rule=dr_rule)
    return {
        "agents": names,
        "mean": dict(zip(names, map(float, uniform), strict=True)),
        "fitness": dict(zip(names, map(float, rd.fitness), strict=True)),
        "final_population": dict(zip(names, map(float, rd.final_population), strict=True)),
        "population_weighted_fitness": float(rd.population_weighted_fitness),
        "deviation_ratings": dict(zip(names, dr.ratings, strict=True)),
        "dr_rule": dr.rule,
    }
