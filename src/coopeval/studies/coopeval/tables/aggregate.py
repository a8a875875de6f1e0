"""The aggregate table (docs/protocol/tables.md, docs/protocol/games.md#normalisation): per (mechanism, metric, agent) the mean over the
aggregate games of the run-averaged per-game values, Mean and Fitness normalised
(x − NE) / (coop − NE), ± the standard error across games; DR is never normalised."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from coopeval.games import Game
from coopeval.studies.coopeval.tables.bootstrap import percentile_interval
from coopeval.studies.coopeval.tables.frames import TABLE_METRICS, CellStats, TableAxes, TableCell
from coopeval.studies.coopeval.tables.stats import agent_cells, ranked_rows, standard_error

__all__ = ["aggregate_cell", "aggregate_rows", "normalised_game_cell"]


def normalised_game_cell(
    cell: TableCell, metric: str, game: Game
) -> tuple[float, float | None, np.ndarray | None]:
    """(mean, s.e., bootstrap replicates or None) of one per-game cell on the aggregate scale.

    Mean and Fitness are normalised (x − NE) / (coop − NE) (docs/protocol/games.md#normalisation), their s.e. divided by
    |coop − NE|; DR stays raw and has no replicates.
    """
    scale = 1.0
    if metric in ("Mean", "Fitness"):
        scale = abs(game.coop_value - game.ne_value)
        mean = game.normalise(float(cell["mean"]))  # type: ignore[arg-type]
        reps = cell["_reps"]
        normalised = None if reps is None else (np.asarray(reps) - game.ne_value) / (game.coop_value - game.ne_value)
    else:
        mean = float(cell["mean"])  # type: ignore[arg-type]
        normalised = None
    se = cell["se"]
    return mean, None if se is None else float(se) / scale, normalised  # type: ignore[arg-type]


def aggregate_cell(
    mech: str,
    metric: str,
    agent: str,
    in_games: Sequence[str],
    cell_stats: CellStats,
    dr_source: Mapping[tuple[str, str], str],
    game_of: Callable[[str], Game],
) -> TableCell | None:
    """One agent's aggregate cell: mean over games of the normalised per-game means (docs/protocol/tables.md).

    s.e. across games (a single game keeps its own normalised s.e.); the interval is the
    percentile interval of the game-averaged replicates when every game has replicates. None
    if the agent has no per-game cell. NaN-aware on purpose (issue 25 kind 7): a game whose
    mean is undefined is left out; ``n`` counts the games with a cell, ``n_valid`` those used.
    """
    per_game_means: list[float] = []
    per_game_se: list[float | None] = []
    reps_list: list[np.ndarray | None] = []
    games_used: list[str] = []
    for g in in_games:
        cell = cell_stats[(mech, g, metric)].get(agent)
        if cell is None:
            continue
        mean, se, reps = normalised_game_cell(cell, metric, game_of(g))
        per_game_means.append(mean)
        reps_list.append(reps)
        per_game_se.append(se)
        games_used.append(g)
    if not per_game_means:
        return None
    n_games = len(per_game_means)
    finite = [i for i, m in enumerate(per_game_means) if math.isfinite(m)]
    per_game_means = [per_game_means[i] for i in finite]
    per_game_se = [per_game_se[i] for i in finite]
    reps_list = [reps_list[i] for i in finite]
    if not per_game_means:
        per_game_means, per_game_se = [math.nan], [None]
    se_value = standard_error(per_game_means) if len(per_game_means) >= 2 else per_game_se[0]
    ci: tuple[float | None, float | None] = (None, None)
    if reps_list and all(r is not None for r in reps_list):
        ci = percentile_interval(np.mean(np.vstack(reps_list), axis=0))  # type: ignore[arg-type]
    return {
        "mechanism": mech,
        "game": "All",
        "metric": metric,
        "mean": float(np.mean(per_game_means)),
        "se": se_value,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "n": n_games,
        "n_valid": len(finite),
        "dr_source": "+".join(sorted({dr_source[(mech, g)] for g in games_used if (mech, g) in dr_source}))
        if metric == "DR"
        else None,
    }


def aggregate_rows(
    cell_stats: CellStats,
    dr_source: Mapping[tuple[str, str], str],
    axes: TableAxes,
    aggregate_games: Sequence[str],
    game_of: Callable[[str], Game],
) -> list[TableCell]:
    """Ranked rows of the aggregate table over ``aggregate_games`` (mechanism → metric → agent)."""
    rows: list[TableCell] = []
    for mech in axes.mechanisms:
        for metric in TABLE_METRICS:
            in_games = [g for g in aggregate_games if (mech, g, metric) in cell_stats]
            if not in_games:
                continue
            cells = agent_cells(
                axes.agents,
                lambda agent: aggregate_cell(mech, metric, agent, in_games, cell_stats, dr_source, game_of),  # noqa: B023
            )
            rows.extend(ranked_rows(cells, metric, axes.agents))
    return rows
