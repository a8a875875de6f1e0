"""Core figures of the spine: Mean/Fitness per agent per mechanism, match-up payoff heatmaps,
replicator trajectories. Frames come from the store (read-only); charts are saved as PNG and
SVG (vl-convert, offline) and interactive HTML.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from coopeval.studies.coopeval.tables.ranks import descending, group_ranks
from coopeval.studies.coopeval.tables.tie_groups import attach_tie_groups, tie_groups_from

MAX_ROWS = 5000


def _check_rows(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    if frame.height > MAX_ROWS:
        raise ValueError(f"figure {name}: {frame.height} rows exceed Altair's {MAX_ROWS}-row limit; aggregate first")
    return frame


def mean_fitness_frame(metrics: pl.DataFrame) -> pl.DataFrame:
    """Per (mechanism, game, agent, metric ∈ {Mean, Fitness}): value averaged over runs."""
    return (
        metrics.filter(pl.col("metric").is_in(["Mean", "Fitness"]))
        .group_by(["mechanism", "game", "agent", "metric"])
        .agg(pl.col("value").mean().alias("value"), pl.len().alias("runs"))
        .sort(["mechanism", "game", "metric", "agent"])
    )


def with_tie_groups(frame: pl.DataFrame, comparisons: pl.DataFrame | None) -> pl.DataFrame:
    """:func:`mean_fitness_frame` with a ``tie_group`` column: the letters the per-game table
    shows (:mod:`coopeval.studies.coopeval.tables.tie_groups`; agents ranked by value with the
    tables' 5 % grouping, rank ties in name order), null without comparisons."""
    rows = frame.to_dicts()
    by_subtable: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_subtable.setdefault((row["mechanism"], row["game"], row["metric"]), []).append(row)
    for (_, _, metric), members in by_subtable.items():
        ranks = group_ranks({r["agent"]: r["value"] for r in members}, descending(metric))
        for r in members:
            r["rank"] = ranks.get(r["agent"])
    attach_tie_groups(rows, tie_groups_from(comparisons), sorted({r["agent"] for r in rows}))
    groups = [r["tie_group"] for r in rows]
    return frame.with_columns(pl.Series("tie_group", groups, dtype=pl.String))


def payoff_grid_frame(scores: pl.DataFrame, matchups: pl.DataFrame) -> pl.DataFrame:
    """2-player cells: mean score of the row agent (seat-pooled) against each column agent."""
    two = matchups.filter(pl.col("agents").list.len() == 2).select("cell_id", "matchup_id", "agents")
    joined = scores.join(two, on=["cell_id", "matchup_id"])
    joined = joined.with_columns(
        pl.when(pl.col("seat") == 1).then(pl.col("agents").list.get(1)).otherwise(pl.col("agents").list.get(0)).alias("opponent")
    )
    return (
        joined.group_by(["mechanism", "game", "agent", "opponent"])
        .agg(pl.col("score").mean().alias("payoff"), pl.len().alias("n"))
        .sort(["mechanism", "game", "agent", "opponent"])
    )


def mean_fitness_chart(frame: pl.DataFrame) -> Any:
    """Grouped bars: value per agent, one column per game, rows Mean/Fitness, colour = agent;
    a ``tie_group`` column (:func:`with_tie_groups`) is printed above each bar."""
    import altair as alt

    data = _check_rows(frame, "mean_fitness")
    base = alt.Chart(data).encode(x=alt.X("mechanism:N", title=None), y=alt.Y("value:Q", title="payoff (points)"), xOffset="agent:N")
    tooltip = ["mechanism", "game", "agent", "metric", alt.Tooltip("value:Q", format=".3f"), "runs"]
    bars = base.mark_bar().encode(color=alt.Color("agent:N"), tooltip=tooltip + (["tie_group"] if "tie_group" in data.columns else []))
    layers = [bars]
    if "tie_group" in data.columns:
        layers.append(base.mark_text(dy=-5, fontSize=8).encode(text=alt.Text("tie_group:N")))
    return (
        alt.layer(*layers, data=data)
        .properties(width=220, height=160)
        .facet(row=alt.Row("metric:N"), column=alt.Column("game:N"))
        .resolve_scale(y="independent")
        .properties(title="Mean and replicator Fitness per agent (averaged over runs; letters: rank tie groups)")
    )


def payoff_heatmap_chart(frame: pl.DataFrame, baseline: float, cooperative: float, title: str) -> Any:
    """Row agent's mean payoff against each column agent; colours anchored at the Nash baseline
    (red) and the cooperative payoff (green)."""
    import altair as alt

    data = _check_rows(frame, "payoff_heatmap")
    low, high = min(baseline, float(data["payoff"].min() or baseline)), max(cooperative, float(data["payoff"].max() or cooperative))
    base = alt.Chart(data).encode(
        x=alt.X("opponent:N", title="co-player"), y=alt.Y("agent:N", title="agent")
    )
    heat = base.mark_rect().encode(
        color=alt.Color(
            "payoff:Q",
            scale=alt.Scale(domain=[low, baseline, cooperative, high], range=["#7f0000", "#d73027", "#1a9850", "#00441b"]),
        ),
        tooltip=["agent", "opponent", alt.Tooltip("payoff:Q", format=".3f"), "n"],
    )
    text = base.mark_text(fontSize=11).encode(text=alt.Text("payoff:Q", format=".2f"))
    return (heat + text).properties(width=260, height=220, title=title)


def trajectory_chart(frame: pl.DataFrame, title: str) -> Any:
    """Population share per agent over replicator steps (subsampled to ≤ 101 steps per agent)."""
    import altair as alt

    steps = frame["step"].max() or 0
    stride = max(1, int(steps) // 100)
    data = _check_rows(frame.filter((pl.col("step") % stride == 0) | (pl.col("step") == steps)), "trajectory")
    return (
        alt.Chart(data)
        .mark_line()
        .encode(
            x=alt.X("step:Q", title="replicator step"),
            y=alt.Y("share:Q", title="population share", scale=alt.Scale(domain=[0, 1])),
            color="agent:N",
            tooltip=["agent", "step", alt.Tooltip("share:Q", format=".4f")],
        )
        .properties(width=320, height=200, title=title)
    )


ABLATION_PARAMETERS = {"lookup_depth": "k (history window)", "discount": "δ (continuation probability)"}


def ablation_frame(metrics: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """Mean per (mechanism, game, varied parameter, value, agent), averaged over replicates.

    ``cells`` is the cell manifest (columns cell_id, mechanism, variant, mechanism_params as
    JSON). A variant cell belongs to the panel of the parameter (k or δ) in which it differs
    from its mechanism's default cell; the default cell appears in both panels.
    """
    import json

    params = {row["cell_id"]: (row["mechanism"], row["variant"], json.loads(row["mechanism_params"])) for row in cells.iter_rows(named=True)}
    defaults = {m: p for m, v, p in params.values() if v == "default"}
    rows = []
    for cell_id, (mechanism, variant, values) in params.items():
        base = defaults.get(mechanism)
        if base is None:
            continue
        for parameter in ABLATION_PARAMETERS:
            if parameter not in values:
                continue
            others_equal = all(values[k] == base[k] for k in ABLATION_PARAMETERS if k != parameter and k in values)
            if variant == "default" or (values[parameter] != base[parameter] and others_equal):
                rows.append({"cell_id": cell_id, "parameter": ABLATION_PARAMETERS[parameter], "value": float(values[parameter])})
    if not rows:
        return pl.DataFrame(
            schema={"mechanism": pl.String, "game": pl.String, "parameter": pl.String, "value": pl.Float64, "agent": pl.String, "mean": pl.Float64}
        )
    panel = pl.DataFrame(rows).rename({"value": "setting"})
    return (
        metrics.filter(pl.col("metric") == "Mean")
        .join(panel, on="cell_id")
        .group_by(["mechanism", "game", "parameter", "setting", "agent"])
        .agg(pl.col("value").mean().alias("mean"))
        .rename({"setting": "value"})
        .sort(["mechanism", "parameter", "agent", "value"])
    )


def ablation_chart(frame: pl.DataFrame) -> Any:
    """Mean against the varied parameter, one panel per (mechanism, parameter), a line per agent."""
    import altair as alt

    data = _check_rows(frame, "ablation")
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("value:Q", title="parameter value", scale=alt.Scale(zero=False)),
            y=alt.Y("mean:Q", title="Mean payoff (points)"),
            color="agent:N",
            tooltip=["mechanism", "parameter", "value", "agent", alt.Tooltip("mean:Q", format=".3f")],
        )
        .properties(width=200, height=160)
        .facet(row=alt.Row("mechanism:N"), column=alt.Column("parameter:N"))
        .resolve_scale(x="independent")
        .properties(title="Ablations: Mean against the varied parameter (others at k = 3, δ = 0.8)")
    )
