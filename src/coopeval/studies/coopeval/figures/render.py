"""Render the core figures from the store (read-only)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from coopeval.core.charts import note_chart, save_chart
from coopeval.core.duckdb_settings import open_duckdb
from coopeval.games import get_game
from coopeval.studies.coopeval.figures.core import (
    ablation_chart,
    ablation_frame,
    mean_fitness_chart,
    mean_fitness_frame,
    payoff_grid_frame,
    payoff_heatmap_chart,
    trajectory_chart,
    with_tie_groups,
)
from coopeval.studies.coopeval.figures.group_size import group_size_chart, group_size_frame


def render_core_figures(
    store: str | Path,
    out_dir: str | Path,
    mechanisms: Sequence[str],
    games: Sequence[str],
    formats: Sequence[str],
    ablation: bool = False,
    group_size: bool = False,
) -> list[Path]:
    """Write ``mean_fitness``, ``payoffs_<mechanism>_<game>`` and ``replicator_<mechanism>_<game>``
    (and ``ablation``, ``group_size`` when asked).

    A figure that has no data (e.g. a 3-player heatmap, or no metagame for reputation) is
    written as a one-line chart explaining why, so every declared output exists.
    """
    out = Path(out_dir)
    con = open_duckdb(store, read_only=True, purpose="CoopEval figures")
    try:
        metrics = con.sql("SELECT * FROM metrics").pl()
        scores = con.sql("SELECT * FROM scores").pl()
        matchups = con.sql("SELECT * FROM matchups").pl()
        default_cells = "SELECT cell_id FROM cells WHERE variant = 'default'"
        trajectories = con.sql(
            "SELECT mechanism, game, step, agent, avg(share) AS share FROM trajectories "
            f"WHERE cell_id IN ({default_cells}) GROUP BY ALL ORDER BY step"
        ).pl()
        cells = con.sql("SELECT cell_id, mechanism, variant, mechanism_params, players FROM cells").pl()
        pg_decisions = (
            con.sql("SELECT cell_id, mechanism, game, agent, kind, status, action FROM decisions WHERE game = 'PublicGoods'").pl()
            if group_size
            else None
        )
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        comparisons = con.sql("SELECT * FROM comparisons").pl() if "comparisons" in present else None
    finally:
        con.close()
    if ablation:
        written = save_chart(ablation_chart(ablation_frame(metrics, cells)), out / "ablation", formats)
    else:
        written = []
    if pg_decisions is not None:
        written += save_chart(group_size_chart(group_size_frame(pg_decisions, cells)), out / "group_size", formats)
    # Headline figures use the default parameters only (variants are ablations).
    default_ids = cells.filter(pl.col("variant") == "default")["cell_id"]
    metrics = metrics.filter(pl.col("cell_id").is_in(default_ids))
    scores = scores.filter(pl.col("cell_id").is_in(default_ids))
    headline = with_tie_groups(mean_fitness_frame(metrics), comparisons)
    written += save_chart(mean_fitness_chart(headline), out / "mean_fitness", formats)
    grid = payoff_grid_frame(scores, matchups)
    for mechanism in mechanisms:
        for game_key in games:
            game = get_game(game_key)
            frame = grid.filter((pl.col("mechanism") == mechanism) & (pl.col("game") == game.name))
            if frame.height:
                chart = payoff_heatmap_chart(frame, game.ne_value, game.coop_value, f"{mechanism} · {game.title}: mean payoff of row agent")
            else:
                chart = note_chart(f"{mechanism} · {game.title}: no 2-player match-up grid ({game.n_players} players or no complete match-ups)")
            written += save_chart(chart, out / f"payoffs_{mechanism}_{game_key}", formats)
            traj = trajectories.filter((pl.col("mechanism") == mechanism) & (pl.col("game") == game.name))
            if traj.height:
                chart = trajectory_chart(traj.select("step", "agent", "share"), f"{mechanism} · {game.title}: replicator dynamics")
            else:
                chart = note_chart(f"{mechanism} · {game.title}: no replicator trajectory (no metagame or incomplete tensor)")
            written += save_chart(chart, out / f"replicator_{mechanism}_{game_key}", formats)
    return written
