"""Evaluate a ``scores`` table into the long ``metrics`` table (one path for our runs and imports).

For each cell (one experiment of one run): Mean (pooled over every (matchup, seat), docs/protocol/evaluation.md#mean);
for metagame mechanisms also the payoff tensor (docs/protocol/evaluation.md#payoff-tensor), replicator dynamics Fitness, final
population and population-weighted fitness (docs/protocol/evaluation.md#replicator-dynamics) and deviation ratings with their ranks
(docs/protocol/evaluation.md#deviation-ratings) under each requested rule. Cells whose matchups all have a single seat (the reputation
format: one row per seated agent) get Mean only (docs/protocol/mechanisms.md#reputation item 6, docs/protocol/tables.md step 8).

Everything is computed with :mod:`coopeval.evaluation`; this module only moves frames.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

import polars as pl

from coopeval.core.schemas import conform, empty_frame
from coopeval.evaluation.deviation import (
    canonical_rule,
    deviation_ratings,
    dr_size_problem,
    rank_with_ties,
)
from coopeval.evaluation.replicator import replicator_dynamics
from coopeval.evaluation.tensor import Observation, build_payoff_tensor, mean_payoff
from coopeval.studies.coopeval.tables.defaults import REPLICATOR_LR, REPLICATOR_STEPS

__all__ = ["CELL_KEYS", "LLM_AVERAGE", "compute_metrics", "observations_by_cell"]

LLM_AVERAGE = "LLM Average"
CELL_KEYS = ("cell_id", "source", "run", "mechanism", "game")


def observations_by_cell(scores: pl.DataFrame) -> dict[tuple[str, ...], list[Observation]]:
    """Group a ``scores`` frame into per-cell observations ``(seat agents, seat scores)``.

    Only rows with ``status`` "complete" (or null) are used; a matchup is one observation with
    its seats in seat order.

    Returns
    -------
    dict
        (cell_id, source, run, mechanism, game) → observations, in first-appearance order.

    Raises
    ------
    ValueError
        If a matchup has duplicate seats.
    """
    usable = scores.filter(pl.col("status").is_null() | (pl.col("status") == "complete"))
    usable = usable.sort([*CELL_KEYS, "matchup_id", "seat"], maintain_order=True)
    grouped = (
        usable.group_by([*CELL_KEYS, "matchup_id"], maintain_order=True)
        .agg(pl.col("seat"), pl.col("agent"), pl.col("score"))
    )
    cells: dict[tuple[str, ...], list[Observation]] = {}
    for row in grouped.iter_rows(named=True):
        key = tuple(row[k] for k in CELL_KEYS)
        seats = row["seat"]
        if len(set(seats)) != len(seats):
            raise ValueError(f"cell {key[0]}: matchup {row['matchup_id']} has duplicate seats {seats}")
        cells.setdefault(key, []).append((tuple(row["agent"]), list(row["score"])))
    return cells


def compute_metrics(
    scores: pl.DataFrame,
    *,
    dr_rules: Sequence[str] = ("strictest",),
    steps: int = REPLICATOR_STEPS,
    lr: float = REPLICATOR_LR,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Compute the long ``metrics`` table from a ``scores`` table.

    Rows per cell and agent type: ``Mean`` (rule ""); for metagame cells also ``Fitness``,
    ``FinalPopulation`` (rule ""), and ``DR`` / ``DR_rank`` for each rule in ``dr_rules``
    (rule = canonical rule name; none when the LP is too large,
    :func:`coopeval.evaluation.deviation.dr_size_problem`); plus one ``PopulationFitness`` row for agent
    ``"LLM Average"`` (Σ_i x_i f_i, docs/protocol/evaluation.md#replicator-dynamics item 5). Values are in points (DR: rating ≤ 0,
    DR_rank: 1 = best, ties averaged).

    Parameters
    ----------
    scores:
        A frame with the ``scores`` schema (``coopeval.core.schemas``).
    dr_rules:
        Deviation-rating rules to compute (``"strictest"``, ``"reference-vertex"``); duplicates
        and aliases are merged.
    steps, lr:
        Replicator-dynamics steps and learning rate (uniform start; defaults from the config
        schema, :mod:`coopeval.studies.coopeval.tables.defaults`).
    progress:
        Called with one line per evaluated cell.

    Returns
    -------
    polars.DataFrame
        Conformed to the ``metrics`` schema.

    Raises
    ------
    ValueError
        On an unknown DR rule, a cell with mixed seat counts, or an incomplete tensor.
    coopeval.evaluation.deviation.DeviationRatingError
        When a DR LP fails.
    """
    rules: list[str] = []
    for rule in dr_rules:
        canonical = canonical_rule(rule)
        if canonical not in rules:
            rules.append(canonical)
    rows: list[dict[str, object]] = []
    cells = observations_by_cell(scores)
    for index, (key, observations) in enumerate(cells.items(), start=1):
        start = time.perf_counter()
        cell = dict(zip(CELL_KEYS, key, strict=True))
        rows.extend(_cell_rows(cell, observations, rules, steps, lr))
        if progress is not None:
            progress(f"[{index}/{len(cells)}] evaluated {key[0]} ({time.perf_counter() - start:.2f} s)")
    if not rows:
        return empty_frame("metrics")
    return conform("metrics", pl.DataFrame(rows, infer_schema_length=None))


def _cell_rows(
    cell: dict[str, object], observations: Iterable[Observation], rules: Sequence[str], steps: int, lr: float
) -> list[dict[str, object]]:
    observations = list(observations)
    seat_counts = {len(agents) for agents, _ in observations}
    if len(seat_counts) != 1:
        raise ValueError(f"cell {cell['cell_id']}: matchups with different seat counts {sorted(seat_counts)}")
    rows: list[dict[str, object]] = []

    def add(agent: str, metric: str, value: float, rule: str = "") -> None:
        rows.append({**cell, "agent": agent, "metric": metric, "value": float(value), "rule": rule})

    for agent, value in mean_payoff(observations).items():
        add(agent, "Mean", value)
    if seat_counts == {1}:
        return rows
    agents, tensor = build_payoff_tensor(observations)
    rd = replicator_dynamics(tensor, steps=steps, lr=lr)
    for i, agent in enumerate(agents):
        add(agent, "Fitness", rd.fitness[i])
        add(agent, "FinalPopulation", rd.final_population[i])
    add(LLM_AVERAGE, "PopulationFitness", rd.population_weighted_fitness)
    for rule in rules if dr_size_problem(len(agents), tensor.ndim) is None else ():
        result = deviation_ratings(tensor, rule=rule)
        ranks = rank_with_ties(result.ratings, result.rating_decimals)
        for agent, rating, rank in zip(agents, result.ratings, ranks, strict=True):
            add(agent, "DR", rating, result.rule)
            add(agent, "DR_rank", rank, result.rule)
    return rows
