"""The evaluate stage: scores of one cell → Mean, replicator Fitness and deviation ratings.

Mean is the pooled mean of every (matchup, seat) score of an agent (docs/protocol/evaluation.md#mean). For mechanisms
with a metagame (not Reputation, docs/protocol/mechanisms.md#reputation) the payoff tensor (docs/protocol/evaluation.md#payoff-tensor) feeds replicator dynamics
(docs/protocol/evaluation.md#replicator-dynamics) and deviation ratings (docs/protocol/evaluation.md#deviation-ratings). When excluded (failed) matchups leave tensor cells empty,
Fitness and DR cannot be computed; a ``note`` metric row says so instead of a silent blank. So
does a metagame too large for its tensor (``TensorIncomplete``) or for the deviation-rating LP
(``DRNotComputed``; N-player Public Goods, docs/protocol/evaluation.md#n-player-metagames).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from coopeval.core.schemas import conform
from coopeval.evaluation.deviation import (
    canonical_rule,
    deviation_ratings,
    dr_size_problem,
    rank_with_ties,
)
from coopeval.evaluation.replicator import replicator_dynamics
from coopeval.evaluation.tensor import build_payoff_tensor, mean_payoff
from coopeval.studies.coopeval.tables.defaults import REPLICATOR_LR, REPLICATOR_STEPS
from coopeval.studies.coopeval.tables.frames import AgentColumns
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE
from coopeval.studies.coopeval.tables.stats import llm_average

NO_METAGAME = "NoMetagame"
"""Note metric of a cell without a metagame (Reputation): Fitness and DR are not defined."""
TENSOR_INCOMPLETE = "TensorIncomplete"
"""Note metric of a cell whose payoff tensor has an empty cell (failed match-ups, a roster sample
that is not a cover, or a tensor too large): Fitness and DR are not computed."""
DR_NOT_COMPUTED = "DRNotComputed"
"""Note metric of a cell whose deviation-rating LP is too large: DR is not computed."""
SAMPLE_NOT_COVER = "does not cover every co-player multiset"
"""The words of a ``TensorIncomplete`` note whose cell played a roster sample, not every roster
(readers tell that case from failed match-ups by them: the explorer's reasons for a blank)."""


def observations(scores: pl.DataFrame) -> list[tuple[tuple[str, ...], list[float]]]:
    """Scores grouped per matchup into (seat agents, seat scores) observations."""
    result = []
    for (_mid,), group in scores.sort("seat").group_by(["matchup_id"], maintain_order=True):
        result.append((tuple(group["agent"].to_list()), group["score"].to_list()))
    return result


def _sample_hint(obs: list[tuple[tuple[str, ...], list[float]]], played: int) -> str:
    """The note's second half when the cell played fewer rosters than S^N (a roster sample that
    does not cover every co-player multiset, docs/protocol/tournament.md#match-up-samples)."""
    n_agents, n_seats = len({a for seats, _ in obs for a in seats}), len(obs[0][0])
    if played >= n_agents**n_seats:
        return ""
    return (
        f"; the cell played a sample of {played} of {n_agents}^{n_seats} rosters that {SAMPLE_NOT_COVER}"
        " (docs/protocol/tournament.md#match-up-samples): raise max_matchups for Fitness and DR"
    )


def evaluate_cell(
    scores: pl.DataFrame,
    matchups: pl.DataFrame,
    ids: Mapping[str, Any],
    has_metagame: bool = True,
    steps: int = REPLICATOR_STEPS,
    lr: float = REPLICATOR_LR,
    dr_rule: str = "strictest",
    llm: Mapping[str, bool] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Metrics (long format, ``metrics`` schema) and the replicator trajectory of one cell.

    The LLM Average (Mean, Fitness) is over the LLM agents only (docs/human-play.md): ``llm``
    maps an agent (type string, e.g. ``alice(IO)``, ``bot/tft``) to whether the cell's roster
    says it is a language model (``table_agents(spec["agents"]).llm``,
    :func:`coopeval.studies.coopeval.tables.roster.table_agents`); an agent it does not list is
    classified by its type string (``bot/…`` and ``human/…`` are not LLM agents). A cell with
    no LLM agent has no LLM Average Mean or Fitness row.

    Returns
    -------
    (metrics, trajectory)
        ``trajectory`` has columns cell_id, mechanism, game, run, step, agent, share.
    """
    rows: list[dict[str, Any]] = []

    def add(agent: str, metric: str, value: float | None, rule: str = "") -> None:
        rows.append({**ids, "agent": agent, "metric": metric, "value": value, "rule": rule})

    obs = observations(scores)
    excluded = matchups.filter(pl.col("status") != "complete").height
    add(LLM_AVERAGE, "ExcludedMatchups", float(excluded))
    means = mean_payoff(obs) if obs else {}
    for agent, value in means.items():
        add(agent, "Mean", value)
    is_llm = AgentColumns(llm=dict(llm or {})).is_llm  # as the roster says; else by type string
    if means and (average := llm_average("Mean", means, None, is_llm)) is not None:
        add(LLM_AVERAGE, "Mean", average)
    trajectory = pl.DataFrame(schema={"step": pl.Int64, "agent": pl.String, "share": pl.Float64})
    if not has_metagame:
        add(LLM_AVERAGE, NO_METAGAME, 1.0, "no metagame for reputation: Fitness and DR are not defined (docs/protocol/mechanisms.md#reputation)")
    elif obs:
        try:
            agents, tensor = build_payoff_tensor(obs)
        except ValueError as exc:
            add(LLM_AVERAGE, TENSOR_INCOMPLETE, float(excluded), str(exc) + _sample_hint(obs, matchups.height))
        else:
            rd = replicator_dynamics(tensor, steps=steps, lr=lr)
            for i, agent in enumerate(agents):
                add(agent, "Fitness", float(rd.fitness[i]))
                add(agent, "FinalPopulation", float(rd.final_population[i]))
            fitness = {a: float(rd.fitness[i]) for i, a in enumerate(agents)}
            if all(is_llm(a) for a in agents):
                add(LLM_AVERAGE, "Fitness", float(rd.population_weighted_fitness))
            elif (average := llm_average("Fitness", fitness, dict(zip(agents, map(float, rd.final_population), strict=True)), is_llm)) is not None:
                add(LLM_AVERAGE, "Fitness", average)
            if (too_large := dr_size_problem(len(agents), tensor.ndim)) is not None:
                add(LLM_AVERAGE, DR_NOT_COMPUTED, float(tensor.size), too_large)
            elif len(agents) > 1:
                # The exact rule always; the configured compatibility rule in addition.
                for rule in dict.fromkeys(["strictest", canonical_rule(dr_rule)]):
                    dr = deviation_ratings(tensor, rule=rule)
                    ranks = rank_with_ties(list(dr.ratings), dr.rating_decimals)
                    for i, agent in enumerate(agents):
                        add(agent, "DR", float(dr.ratings[i]), dr.rule)
                        add(agent, "DR_rank", float(ranks[i]), dr.rule)
            history = rd.history
            steps_idx = np.repeat(np.arange(history.shape[0]), len(agents))
            trajectory = pl.DataFrame(
                {
                    "step": steps_idx.astype(np.int64),
                    "agent": agents * history.shape[0],
                    "share": history.reshape(-1),
                }
            )
    metrics = conform("metrics", pl.DataFrame(rows, infer_schema_length=None))
    trajectory = trajectory.with_columns(
        pl.lit(ids["cell_id"]).alias("cell_id"),
        pl.lit(ids["mechanism"]).alias("mechanism"),
        pl.lit(ids["game"]).alias("game"),
        pl.lit(ids["run"]).alias("run"),
    )
    return metrics, trajectory
