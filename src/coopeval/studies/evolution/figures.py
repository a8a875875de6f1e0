"""Figures and report pages of the evolution study (issue 11 §8), read-only from the store.

Every chart is Altair, saved as PNG/SVG/HTML (the lineage view as interactive HTML only). A
figure without data is written as a one-line chart saying so, so every declared output exists.
Panels are ``protocol · variant`` (colour = model) unless said otherwise.

=====================  ===================================================================
stem                   content
=====================  ===================================================================
``evo_resources``      mean final resources per generation: runs thin, mean over runs bold
``evo_donation``       donation fraction per generation (Σ donated / Σ donor resources)
``evo_punishment``     share of encounters with a punishment, per generation
``evo_robustness``     free-rider invasion robustness (%) per generation
``evo_matrices``       mean strategy matrices (11 × 11, % donated), one panel per population
``evo_features``       feature vs robustness per model with the fitted line (≥ 3 models)
``evo_lineage``        which strategy text descended from which (HTML, one run at a time)
``oes.html``           the OES decomposition (Table 2 layout) and the Table 1 regressions
=====================  ===================================================================
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.charts import note_chart, report_format, save_chart
from coopeval.core.duckdb_settings import open_duckdb
from coopeval.studies.evolution.robustness import (
    FEATURES,
    GROUP,
    POPULATION,
    feature_regressions,
    model_feature_means,
    oes_decomposition,
    robustness_by_model,
)
from coopeval.studies.evolution.summaries import RUN_KEYS, lineage_edges, mean_matrices

FIGURES = ("evo_resources", "evo_donation", "evo_punishment", "evo_robustness", "evo_matrices")
"""Figures always drawn (every configured format)."""
FEATURES_FIGURE = "evo_features"
"""Drawn only with three or more models (:func:`has_feature_figure`)."""
LINEAGE_FIGURE = "evo_lineage"
"""Interactive HTML only."""
FIGURE_DIR = "results/figures/evolution"
OES_PAGE = "results/report/evolution/oes.html"

STORE_TABLES = ("evo_generations", "evo_strategies", "invasion_tests", "strategy_matrix", "matrix_features")


def is_reported(stem: str, path: str, formats: Sequence[str]) -> bool:
    """Whether the file ``path`` of figure ``stem`` is the one embedded in the report (the
    :func:`report_format` file; the lineage chart exists as HTML only)."""
    return stem == LINEAGE_FIGURE or path.endswith(f"{stem}.{report_format(formats)}")


def has_feature_figure(n_models: int) -> bool:
    """The feature-vs-robustness scatter needs three or more models (a fitted line with n − 2 ≥ 1)."""
    return n_models >= 3


def figure_files(formats: Sequence[str], n_models: int) -> dict[str, list[str]]:
    """Stem → the files the ``evolution_figures`` rule writes (below :data:`FIGURE_DIR`)."""
    stems = [*FIGURES, *([FEATURES_FIGURE] if has_feature_figure(n_models) else [])]
    files = {stem: [f"{FIGURE_DIR}/{stem}.{fmt}" for fmt in formats] for stem in stems}
    files[LINEAGE_FIGURE] = [f"{FIGURE_DIR}/{LINEAGE_FIGURE}.html"]
    return files


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------


def _panel(frame: pl.DataFrame, with_model: bool = False) -> pl.DataFrame:
    parts = [pl.col("protocol"), pl.lit(" · "), pl.col("variant")]
    if with_model:
        parts += [pl.lit(" · "), pl.col("model")]
    return frame.with_columns(pl.concat_str(parts).alias("panel"))


def _generations(frame: pl.DataFrame) -> list[int]:
    """Integer axis ticks: the generations present (no 1.5)."""
    return sorted({int(g) for g in frame["generation"].to_list()})


def runs_and_mean(per_run: pl.DataFrame, value: str) -> pl.DataFrame:
    """Long frame for a runs-thin / mean-bold line chart: one line per run (``kind`` = run,
    ``line`` = cell id) and one per protocol × model × variant (``kind`` = mean)."""
    runs = per_run.select(*RUN_KEYS, "generation", pl.col(value).cast(pl.Float64).alias("value"), pl.lit("run").alias("kind"), pl.col("cell_id").alias("line"))
    mean = (
        runs.group_by([*RUN_KEYS, "generation"])
        .agg(pl.col("value").mean())
        .with_columns(pl.lit("mean").alias("kind"), pl.concat_str([pl.lit("mean:"), *[pl.col(k) for k in RUN_KEYS]], separator="/").alias("line"))
        .select(runs.columns)
    )
    return _panel(pl.concat([runs, mean]).sort([*RUN_KEYS, "kind", "line", "generation"]))


def generation_chart(frame: pl.DataFrame, y_title: str, title: str, domain: tuple[float, float] | None = None) -> Any:
    """Lines over generations from :func:`runs_and_mean`: runs thin and faint, the mean bold."""
    import altair as alt

    if frame.height == 0:
        return note_chart(f"{title}: no data")
    y = alt.Y("value:Q", title=y_title, scale=alt.Scale(domain=list(domain)) if domain else alt.Undefined)
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("generation:Q", title="generation", axis=alt.Axis(values=_generations(frame), format="d")),
            y=y,
            color=alt.Color("model:N", title="model"),
            detail="line:N",
            strokeWidth=alt.StrokeWidth("kind:N", scale=alt.Scale(domain=["run", "mean"], range=[1.0, 3.5]), legend=None),
            opacity=alt.Opacity("kind:N", scale=alt.Scale(domain=["run", "mean"], range=[0.35, 1.0]), legend=None),
            tooltip=["panel:N", "model:N", "kind:N", "generation:Q", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width=260, height=180)
        .facet(facet=alt.Facet("panel:N", title=None), columns=3)
        .properties(title=title)
    )


def matrices_chart(matrix: pl.DataFrame) -> Any:
    """Heatmaps of the mean strategy matrices (row i: x_B = 10·i %, column j: x_A = 10·j %)."""
    import altair as alt

    means = mean_matrices(matrix)
    if means.height == 0:
        return note_chart("strategy matrices: none analysed (evolution.matrix.per_generation = 0)")
    means = _panel(means, with_model=True).with_columns((pl.col("i") * 10).alias("x_B"), (pl.col("j") * 10).alias("x_A"))
    return (
        alt.Chart(means)
        .mark_rect()
        .encode(
            x=alt.X("x_A:O", title="x_A: what the recipient last gave (%)"),
            y=alt.Y("x_B:O", title="x_B: what the recipient's last recipient gave (%)", sort="descending"),
            color=alt.Color("mean_percentage:Q", title="donated (%)", scale=alt.Scale(domain=[0, 100], scheme="viridis")),
            tooltip=["panel:N", "x_A:O", "x_B:O", alt.Tooltip("mean_percentage:Q", format=".1f"), "n_strategies:Q"],
        )
        .properties(width=220, height=220)
        .facet(facet=alt.Facet("panel:N", title=None), columns=3)
        .properties(title="Mean strategy matrices (% of resources donated)")
    )


def feature_points(features: pl.DataFrame, invasion: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per protocol × variant: model-level feature means against robustness (long: protocol,
    variant, feature, model, x, robustness) and the fitted lines (protocol, variant, feature, x,
    fitted, r2). Variants are never pooled."""
    table = model_feature_means(features).join(robustness_by_model(invasion).select(*POPULATION, "robustness"), on=POPULATION)
    fits = feature_regressions(features, invasion)
    points, lines = [], []
    for feature in FEATURES:
        for row in table.iter_rows(named=True):
            x = row[feature]
            points.append({"protocol": row["protocol"], "variant": row["variant"], "feature": feature, "model": row["model"],
                           "x": float(x) if x is not None else None, "robustness": row["robustness"]})
        for fit in fits.filter(pl.col("feature") == feature).iter_rows(named=True):
            if fit["slope"] is None:
                continue
            block = table.filter((pl.col("protocol") == fit["protocol"]) & (pl.col("variant") == fit["variant"]))
            xs = block[feature].cast(pl.Float64).drop_nulls().to_list()
            lines += [
                {"protocol": fit["protocol"], "variant": fit["variant"], "feature": feature, "x": x,
                 "fitted": fit["intercept"] + fit["slope"] * x, "r2": fit["r2"]}
                for x in (min(xs), max(xs))
            ]
    point_schema = {"protocol": pl.String, "variant": pl.String, "feature": pl.String, "model": pl.String, "x": pl.Float64, "robustness": pl.Float64}
    line_schema = {"protocol": pl.String, "variant": pl.String, "feature": pl.String, "x": pl.Float64, "fitted": pl.Float64, "r2": pl.Float64}
    return pl.DataFrame(points, schema=point_schema), pl.DataFrame(lines, schema=line_schema)


def features_chart(features: pl.DataFrame, invasion: pl.DataFrame) -> Any:
    """Robustness (%) against each model-level feature mean, with the least-squares line."""
    import altair as alt

    points, lines = feature_points(features, invasion)
    if points.height == 0:
        return note_chart("feature vs robustness: no model has both matrices and invasion tests")
    label = [pl.col("protocol"), pl.lit(" · "), pl.col("variant"), pl.lit(" · "), pl.col("feature")]
    points = points.with_columns(pl.concat_str(label).alias("panel"))
    lines = lines.with_columns(pl.concat_str(label).alias("panel"))
    dots = (
        alt.Chart()
        .mark_circle(size=70)
        .encode(
            x=alt.X("x:Q", title="model-level mean of the feature", scale=alt.Scale(zero=False)),
            y=alt.Y("robustness:Q", title="robustness (%)"),
            color="model:N",
            tooltip=["model:N", alt.Tooltip("x:Q", format=".3f"), alt.Tooltip("robustness:Q", format=".1f")],
        )
    )
    data = pl.concat([points.with_columns(pl.lit(None, pl.Float64).alias("fitted")), lines.with_columns(pl.lit(None, pl.String).alias("model"), pl.lit(None, pl.Float64).alias("robustness"))], how="diagonal")
    fitted = alt.Chart().mark_line(color="black").encode(x="x:Q", y="fitted:Q").transform_filter("datum.fitted != null")
    return (
        alt.layer(dots, fitted, data=data)
        .properties(width=220, height=180)
        .facet(facet=alt.Facet("panel:N", title=None), columns=3)
        .resolve_scale(x="independent")
        .properties(title="Feature vs free-rider robustness, per model (line: least squares)")
    )


def lineage_chart(strategies: pl.DataFrame) -> Any:
    """Interactive lineage: one dot per agent and generation (y = rank, 1 = best), edges from
    parent to child (Horibe offspring, V&H survivors; V&H advice edges faint); a drop-down
    picks the run; tooltips show the strategy text."""
    import altair as alt

    if strategies.height == 0:
        return note_chart("strategy lineage: no strategies")
    nodes = strategies.with_columns(
        pl.concat_str([pl.col("protocol"), pl.col("variant"), pl.col("model"), pl.col("run")], separator="/").alias("population"),
        pl.col("text").str.slice(0, 400).alias("strategy"),
    ).select("cell_id", "population", "generation", "agent_id", "rank", "score", "strategy", "survived", "parent_rank")
    edges = lineage_edges(strategies)
    parent_pos = nodes.select("cell_id", (pl.col("generation") + 1).alias("generation"), pl.col("agent_id").alias("parent"), pl.col("rank").alias("parent_y"))
    child_pos = nodes.select("cell_id", "population", "generation", pl.col("agent_id").alias("child"), pl.col("rank").alias("child_y"))
    edges = (
        edges.join(parent_pos, on=["cell_id", "generation", "parent"])
        .join(child_pos, on=["cell_id", "generation", "child"])
        .with_columns((pl.col("generation") - 1).alias("parent_generation"))
    )
    populations = sorted(set(nodes["population"].to_list()))
    pick = alt.param(name="population", value=populations[0], bind=alt.binding_select(options=populations, name="run: "))
    y = alt.Y("child_y:Q", title="rank in its generation (1 = best)", scale=alt.Scale(reverse=True, zero=False, padding=12))
    edge_chart = (
        alt.Chart(edges)
        .mark_rule()
        .encode(
            x=alt.X("parent_generation:Q", title="generation", axis=alt.Axis(values=_generations(nodes), format="d"), scale=alt.Scale(zero=False, padding=20)),
            x2="generation:Q",
            y=alt.Y("parent_y:Q", title="rank in its generation (1 = best)", scale=alt.Scale(reverse=True, zero=False, padding=12)),
            y2="child_y:Q",
            color=alt.Color("relation:N", scale=alt.Scale(domain=["offspring", "survivor", "advice"], range=["#1f77b4", "#2ca02c", "#cccccc"])),
            opacity=alt.condition("datum.relation == 'advice'", alt.value(0.35), alt.value(0.9)),
        )
        .transform_filter("datum.population == population")
    )
    node_chart = (
        alt.Chart(nodes.rename({"rank": "child_y"}))
        .mark_circle(size=90, color="black")
        .encode(
            x="generation:Q",
            y=y,
            tooltip=["agent_id:N", "generation:Q", alt.Tooltip("child_y:Q", title="rank"), alt.Tooltip("score:Q", format=".1f"), "parent_rank:Q", "survived:N", "strategy:N"],
        )
        .transform_filter("datum.population == population")
    )
    return alt.layer(edge_chart, node_chart).add_params(pick).properties(width=640, height=360, title="Strategy lineage (hover a dot for its text)")


def oes_page(features: pl.DataFrame, invasion: pl.DataFrame) -> str:
    """HTML: per protocol × variant (never pooled), the OES decomposition (Table 2 layout) and,
    with ≥ 3 models, the single-feature regressions (Table 1 layout)."""
    parts = ["<h1>Evolution: OES decomposition and feature regressions</h1>"]
    groups = sorted({(r["protocol"], r["variant"]) for frame in (features, invasion) for r in frame.select(GROUP).iter_rows(named=True)})
    if not groups:
        parts.append("<p><em>No invasion tests or strategy matrices in this run.</em></p>")
    for protocol, variant in groups:
        f = features.filter((pl.col("protocol") == protocol) & (pl.col("variant") == variant))
        inv = invasion.filter((pl.col("protocol") == protocol) & (pl.col("variant") == variant))
        parts.append(f"<h2>{html.escape(protocol)} · {html.escape(variant)}</h2>")
        parts.append("<p>Model-level means at each model's last analysed generation (edges and OES in %); robustness = share of tested strategies that beat the free rider.</p>")
        parts.append(_table(oes_decomposition(f, inv) if f.height else robustness_by_model(inv)))
        regressions = feature_regressions(f, inv) if f.height else pl.DataFrame()
        if regressions.height:
            parts.append("<h3>Single-feature regressions of robustness (%)</h3>")
            parts.append(_table(regressions))
        else:
            parts.append("<p><em>Regressions need three or more models with matrices and invasion tests.</em></p>")
    style = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Evolution OES</title><style>{style}</style></head><body>{''.join(parts)}</body></html>"


def _table(frame: pl.DataFrame) -> str:
    if frame.height == 0:
        return "<p><em>none</em></p>"

    def cell(v: Any) -> str:
        return f"<td>{v:.3f}</td>" if isinstance(v, float) else f"<td>{html.escape(str(v))}</td>"

    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in frame.iter_rows())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


# ------------------------------------------------------------------------------------------------
# the rule's entry point
# ------------------------------------------------------------------------------------------------


def load_tables(store: str | Path) -> dict[str, pl.DataFrame]:
    """The evolution tables of the store, opened read-only."""

    con = open_duckdb(store, read_only=True, purpose="evolution figures")
    try:
        return {name: con.sql(f"SELECT * FROM {name}").pl() for name in STORE_TABLES}
    finally:
        con.close()


def render_figures(store: str | Path, formats: Sequence[str], n_models: int, out_dir: str | Path = FIGURE_DIR, oes_path: str | Path = OES_PAGE) -> list[Path]:
    """Write every evolution figure and the OES page; returns the paths written."""
    t = load_tables(store)
    out = Path(out_dir)
    gens = t["evo_generations"]
    per_run_robustness = (
        t["invasion_tests"].group_by(["cell_id", *RUN_KEYS, "generation"]).agg((pl.col("robust").cast(pl.Float64).mean() * 100).alias("robustness"))
    )
    charts = {
        "evo_resources": generation_chart(runs_and_mean(gens, "mean_final"), "mean final resources (units)", "Mean final resources per generation"),
        "evo_donation": generation_chart(runs_and_mean(gens, "donation_fraction"), "share of resources donated", "Donation fraction per generation", (0, 1)),
        "evo_punishment": generation_chart(runs_and_mean(gens, "punish_frequency"), "share of encounters with punishment", "Punishment frequency per generation", (0, 1)),
        "evo_robustness": generation_chart(runs_and_mean(per_run_robustness, "robustness"), "robust strategies (%)", "Free-rider invasion robustness per generation", (0, 100)),
        "evo_matrices": matrices_chart(t["strategy_matrix"]),
    }
    if has_feature_figure(n_models):
        charts[FEATURES_FIGURE] = features_chart(t["matrix_features"], t["invasion_tests"])
    written = []
    for stem, chart in charts.items():
        written += save_chart(chart, out / stem, formats)
    written += save_chart(lineage_chart(t["evo_strategies"]), out / LINEAGE_FIGURE, ["html"])
    page = Path(oes_path)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(oes_page(t["matrix_features"], t["invasion_tests"]), encoding="utf-8")
    return [*written, page]
