"""Small statistics of the tables (docs/protocol/tables.md steps 3–4): standard error over runs or games,
the LLM-average rules, ordering and ranking of one sub-table's cells."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE
from coopeval.studies.coopeval.tables.ranks import descending, group_ranks, is_bold, is_grey

__all__ = ["agent_cells", "in_order", "llm_average", "ranked_rows", "standard_error"]

_WEIGHT_TOLERANCE = 0.01


def standard_error(values: Sequence[float]) -> float | None:
    """√(Σ(x − x̄)²/(n − 1)/n) (docs/protocol/tables.md step 4); None for fewer than 2 values."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return None
    return float(np.std(x, ddof=1) / math.sqrt(len(x)))


def llm_average(
    metric: str,
    values: Mapping[str, float],
    populations: Mapping[str, float] | None = None,
    is_llm: Callable[[str], bool] | None = None,
) -> float | None:
    """LLM-average of one run (docs/protocol/tables.md step 3) over the LLM agents of ``values``
    (``is_llm``, default every agent; bots and people are not LLM agents, docs/human-play.md).

    Mean and DR ranks: unweighted mean over the LLM types. Fitness: Σ_m population_m · fitness_m
    over the LLM types, divided by their total population (1 when every type is an LLM agent); NaN
    if the LLM types died out. None when no agent is an LLM agent (the table has no LLM Average).

    Raises
    ------
    ValueError
        If Fitness lacks populations for some type, or the weights of all types do not sum to
        1 ± 0.01.
    """
    members = [a for a in values if is_llm is None or is_llm(a)]
    if not members:
        return None
    if metric != "Fitness":
        return float(np.mean([values[a] for a in members]))
    if populations is None or set(populations) != set(values):
        raise ValueError("Fitness LLM average needs the final population of every type")
    weight = sum(populations.values())
    if abs(weight - 1.0) > _WEIGHT_TOLERANCE:
        raise ValueError(f"final population weights sum to {weight}, not 1 ± {_WEIGHT_TOLERANCE}")
    if len(members) == len(values):
        return float(sum(populations[a] * values[a] for a in values))
    share = sum(populations[a] for a in members)
    if share <= 0:
        return math.nan
    return float(sum(populations[a] * values[a] for a in members) / share)


def in_order(items: Sequence[str], preferred: Sequence[str]) -> list[str]:
    """``items`` in ``preferred`` order, then the others sorted."""
    known = [x for x in preferred if x in items]
    return known + sorted(set(items) - set(known))


def agent_cells(
    agents: Sequence[str], make: Callable[[str], dict[str, object] | None]
) -> dict[str, dict[str, object]]:
    """``{agent: make(agent)}`` over ``agents`` then the LLM Average, leaving out ``None`` cells."""
    cells = {agent: make(agent) for agent in [*agents, LLM_AVERAGE]}
    return {agent: cell for agent, cell in cells.items() if cell is not None}


def ranked_rows(
    cells: dict[str, dict[str, object]], metric: str, agents: Sequence[str]
) -> list[dict[str, object]]:
    """Attach rank/bold/grey to per-agent cells (LLM Average unranked), in agent order."""
    ranked = {a: float(cells[a]["mean"]) for a in agents if a in cells and a != LLM_AVERAGE}  # type: ignore[arg-type]
    ranks = group_ranks(ranked, descending(metric))
    n = len(ranks)
    rows = []
    for agent in [*agents, LLM_AVERAGE]:
        if agent not in cells:
            continue
        rank = ranks.get(agent) if agent != LLM_AVERAGE else None
        rows.append({**cells[agent], "agent": agent, "rank": rank, "bold": is_bold(rank), "grey": is_grey(rank, n)})
    return rows
