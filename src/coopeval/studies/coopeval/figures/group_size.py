"""How cooperation in Public Goods changes with the number of players N (issue 34;
docs/protocol/games.md#public-goods): the share of action decisions that contribute, per
mechanism, agent and N, averaged over replicates. Drawn when a config plays Public Goods at two
or more group sizes (:func:`coopeval.studies.coopeval.figures.catalog.group_sizes`, e.g.
``config/public_goods_n.yaml``). Every cell counts, default or variant: the variants of such a
config differ in N only."""

from __future__ import annotations

from typing import Any

import polars as pl

from coopeval.games import get_game
from coopeval.studies.coopeval.figures.catalog import GROUP_SIZE_GAME

__all__ = ["group_size_chart", "group_size_frame"]

def group_size_frame(decisions: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """Contribution rate per (mechanism, players, agent), plus agent ``all agents``.

    Parameters
    ----------
    decisions:
        ``decisions`` rows (columns cell_id, game, kind, status, action) of the store.
    cells:
        The cell manifest (columns cell_id, players).

    Returns
    -------
    polars.DataFrame
        Columns mechanism, players, agent, contribution_rate (share of valid action decisions
        whose sampled action is Contribute, the cooperative action), decisions; the rate is the
        mean over replicates of each replicate cell's rate.
    """
    game = get_game(GROUP_SIZE_GAME)
    played = (
        decisions.filter(
            (pl.col("game") == game.name) & (pl.col("kind") == "action") & (pl.col("status") == "ok") & pl.col("action").is_not_null()
        )
        .join(cells.select("cell_id", "players"), on="cell_id")
        .with_columns((pl.col("action") == game.cooperative_action).cast(pl.Float64).alias("contributed"))
    )
    everyone = played.with_columns(pl.lit("all agents").alias("agent"))
    per_cell = pl.concat([played, everyone], how="diagonal_relaxed").group_by(["cell_id", "mechanism", "players", "agent"]).agg(
        pl.col("contributed").mean().alias("rate"), pl.len().alias("n")
    )
    return (
        per_cell.group_by(["mechanism", "players", "agent"])
        .agg(pl.col("rate").mean().alias("contribution_rate"), pl.col("n").sum().cast(pl.Int64).alias("decisions"))
        .sort(["mechanism", "agent", "players"])
    )


def group_size_chart(frame: pl.DataFrame) -> Any:
    """Contribution rate against N, one panel per mechanism, a line per agent (Altair)."""
    import altair as alt

    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("players:Q", title="players N", scale=alt.Scale(zero=False), axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("contribution_rate:Q", title="share of decisions that contribute", scale=alt.Scale(domain=[0, 1])),
            color="agent:N",
            tooltip=["mechanism", "players", "agent", alt.Tooltip("contribution_rate:Q", format=".3f"), "decisions"],
        )
        .properties(width=220, height=180)
        .facet(column=alt.Column("mechanism:N"))
        .properties(title="Public Goods: contribution against the number of players N")
    )
