"""Per-run values and the per-game table (docs/protocol/tables.md steps 3–4): per (mechanism, game, metric,
agent) the mean over runs ± standard error, with bootstrap percentile intervals of Mean and
Fitness (:mod:`coopeval.studies.coopeval.tables.bootstrap`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import polars as pl

from coopeval.studies.coopeval.tables.bootstrap import (
    CellReplicates,
    bootstrap_groups,
    group_rng,
    percentile_interval,
)
from coopeval.studies.coopeval.tables.defaults import TableSettings
from coopeval.studies.coopeval.tables.frames import (
    TABLE_METRICS,
    CellStats,
    CellValues,
    RunValues,
    TableAxes,
    TableCell,
)
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE, observations_by_cell
from coopeval.studies.coopeval.tables.stats import (
    agent_cells,
    llm_average,
    ranked_rows,
    standard_error,
)

__all__ = ["bootstrap_replicates", "metric_lookup", "per_game_cell", "per_game_rows", "per_run_values", "replicates_of"]


def metric_lookup(frame: pl.DataFrame) -> dict[tuple[str, str, str, str, str], dict[str, float]]:
    """(mechanism, game, run, metric, rule or "") → {agent: value} of a long metrics frame."""
    table: dict[tuple[str, str, str, str, str], dict[str, float]] = {}
    for row in frame.iter_rows(named=True):
        key = (row["mechanism"], row["game"], row["run"], row["metric"], row["rule"] or "")
        table.setdefault(key, {})[row["agent"]] = float(row["value"])
    return table


def per_run_values(
    metrics: pl.DataFrame, released: pl.DataFrame | None, dr_rule: str, is_llm: Callable[[str], bool]
) -> tuple[CellValues, dict[tuple[str, str], str]]:
    """(mechanism, game) → metric → run → {agent (incl. LLM Average): value}; and DR source.

    The LLM Average is over the agents ``is_llm`` accepts (the roster's LLM agents,
    :meth:`coopeval.studies.coopeval.tables.frames.AgentColumns.is_llm`;
    bots and people are not LLM agents); a run with no LLM agent has no LLM Average.

    ``DR`` takes the released ``DR_rank`` of a run where there is one, else the ``dr_rule``
    ranks; the DR source of a cell is ``"released"``, ``dr_rule`` or both joined by ``+``.
    LLM averages follow :func:`llm_average` (docs/protocol/tables.md step 3).
    """
    out: CellValues = {}
    dr_source: dict[tuple[str, str], set[str]] = {}
    ours = metric_lookup(metrics)
    rel = metric_lookup(released) if released is not None and released.height else {}
    runs = sorted({(k[0], k[1], k[2]) for k in ours})

    def with_average(values: dict[str, float], metric: str, pops: Mapping[str, float] | None = None) -> dict[str, float]:
        average = llm_average(metric, values, pops, is_llm)
        return values if average is None else {**values, LLM_AVERAGE: average}

    for mech, game, run in runs:
        group = out.setdefault((mech, game), {})
        means = ours.get((mech, game, run, "Mean", ""))
        if means:
            values = {a: v for a, v in means.items() if a != LLM_AVERAGE}
            group.setdefault("Mean", {})[run] = with_average(values, "Mean")
        fitness = ours.get((mech, game, run, "Fitness", ""))
        if fitness:
            pops = ours.get((mech, game, run, "FinalPopulation", ""), {})
            values = {a: v for a, v in fitness.items() if a != LLM_AVERAGE}
            group.setdefault("Fitness", {})[run] = with_average(values, "Fitness", pops)
        exact = ours.get((mech, game, run, "DR_rank", "strictest"))
        if exact:
            group.setdefault("DR_exact", {})[run] = with_average(dict(exact), "DR")
        released_ranks = rel.get((mech, game, run, "DR_rank", "released"))
        configured = ours.get((mech, game, run, "DR_rank", dr_rule))
        chosen, source = (released_ranks, "released") if released_ranks else (configured, dr_rule)
        if chosen:
            group.setdefault("DR", {})[run] = with_average(dict(chosen), "DR")
            dr_source.setdefault((mech, game), set()).add(source)
    return out, {k: "+".join(sorted(v)) for k, v in dr_source.items()}


def bootstrap_replicates(
    scores: pl.DataFrame, settings: TableSettings, progress: Callable[[str], None] | None
) -> dict[tuple[str, str], CellReplicates]:
    """Bootstrap replicates per (mechanism, game), resampling runs and matchups (stratified):
    ``settings.n_bootstrap`` resamples, replicator ``settings.steps`` / ``settings.lr``.

    One RNG stream per (mechanism, game) from ``settings.seed`` (:func:`group_rng`); see
    :mod:`coopeval.studies.coopeval.tables.bootstrap` (docs/protocol/tables.md).
    """
    cells = observations_by_cell(scores)
    groups: dict[tuple[str, str], dict[str, list]] = {}  # type: ignore[type-arg]
    for (_cell_id, _source, run, mech, game), observations in cells.items():
        groups.setdefault((mech, game), {}).setdefault(run, []).extend(observations)
    if progress is not None:
        progress(f"bootstrap: {settings.n_bootstrap} resamples for {len(groups)} (mechanism, game) group(s)")
    work = {
        key: ([runs[r] for r in sorted(runs)], group_rng(settings.seed, *key)) for key, runs in groups.items()
    }
    return bootstrap_groups(work, settings.n_bootstrap, settings.steps, settings.lr)  # type: ignore[arg-type, return-value]


def replicates_of(
    rep: CellReplicates | None, metric: str, agent: str, is_llm: Callable[[str], bool]
) -> np.ndarray | None:
    """Bootstrap replicates of one agent's (or the LLM Average's) metric, shape (B,), or None.

    Only Mean and Fitness have replicates; the LLM Average of Mean is the unweighted mean over
    the LLM types (``is_llm``), of Fitness their population-weighted fitness
    (:meth:`CellReplicates.weighted_fitness`); None with no LLM type.
    """
    if rep is None:
        return None
    members = [is_llm(a) for a in rep.agents]
    if metric == "Mean":
        if agent == LLM_AVERAGE:
            return np.asarray(rep.mean[:, members].mean(axis=1)) if any(members) else None
        return rep.mean[:, rep.agents.index(agent)] if agent in rep.agents else None
    if metric == "Fitness" and rep.fitness is not None and rep.population_fitness is not None:
        if agent == LLM_AVERAGE:
            return rep.weighted_fitness(members)
        return rep.fitness[:, rep.agents.index(agent)] if agent in rep.agents else None
    return None


def per_game_cell(
    mech: str,
    game: str,
    metric: str,
    agent: str,
    runs: RunValues,
    replicates: Mapping[tuple[str, str], CellReplicates],
    dr_source: Mapping[tuple[str, str], str],
    is_llm: Callable[[str], bool],
) -> TableCell | None:
    """Mean over runs ± standard error (docs/protocol/tables.md step 4) and bootstrap percentile interval of one
    agent in one (mechanism, game, metric) cell; None if the agent has no run value.

    NaN-aware on purpose (issue 25 kind 7): a run whose value is not finite is left out of the
    mean and s.e.; ``n`` counts the cell's runs (every run of the mechanism and game with this
    metric, including those where the agent has no value: all its match-ups failed),
    ``n_valid`` the runs with a finite value (the rendered tables say ``(k/n runs)`` where they
    differ, issue 36 item 4); NaN when no run value is finite.
    """
    present = [runs[r][agent] for r in sorted(runs) if agent in runs[r]]
    if not present:
        return None
    xs = [float(x) for x in present if math.isfinite(float(x))]
    ci: tuple[float | None, float | None] = (None, None)
    reps = replicates_of(replicates.get((mech, game)), metric, agent, is_llm)
    if reps is not None:
        ci = percentile_interval(reps)
    return {
        "mechanism": mech,
        "game": game,
        "metric": metric,
        "mean": float(np.mean(xs)) if xs else math.nan,
        "se": standard_error(xs),
        "ci_low": ci[0],
        "ci_high": ci[1],
        "n": len(runs),
        "n_valid": len(xs),
        "dr_source": dr_source.get((mech, game)) if metric == "DR" else None,
        "_reps": reps,
    }


def per_game_rows(
    values: CellValues,
    dr_source: Mapping[tuple[str, str], str],
    replicates: Mapping[tuple[str, str], CellReplicates],
    axes: TableAxes,
    is_llm: Callable[[str], bool],
) -> tuple[list[TableCell], CellStats]:
    """Ranked rows of the per-game table (raw payoffs) and its cells for the aggregate table.

    Rows run game → mechanism → metric (:data:`TABLE_METRICS`) → agent, LLM Average last.
    """
    rows: list[TableCell] = []
    cell_stats: CellStats = {}
    for game in axes.games:
        for mech in axes.mechanisms:
            group = values.get((mech, game))
            if not group:
                continue
            for metric in TABLE_METRICS:
                runs = group.get(metric)
                if not runs:
                    continue
                cells = agent_cells(
                    axes.agents,
                    lambda agent: per_game_cell(mech, game, metric, agent, runs, replicates, dr_source, is_llm),  # noqa: B023
                )
                cell_stats[(mech, game, metric)] = cells
                rows.extend(ranked_rows(cells, metric, axes.agents))
    return rows, cell_stats
