"""Figures and tables of the gossip study, read-only from the store (issue 10 item 7).

:func:`render_figures` writes every figure of :data:`.catalog.FIGURES` (Altair; PNG, SVG, HTML);
:func:`render_tables` the Tables 1–2 layout per testbed as CSV, Markdown and LaTeX plus an HTML
page for the Snakemake report. A figure without data (e.g. no Max cells in the config) is written
as a one-line chart saying so, so every declared output exists.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.charts import note_chart, save_chart
from coopeval.core.duckdb_settings import open_duckdb
from coopeval.studies.gossip.catalog import FIGURES, TABLE_FORMATS
from coopeval.studies.gossip.summary import (
    cooperation_by_interaction_index,
    cooperation_by_round,
    footnotes,
    paper_table,
    replicate_summary,
    to_latex,
    to_markdown,
    tone_distribution,
)
from coopeval.studies.gossip.testbeds import REGISTRY, TESTBEDS
from coopeval.studies.gossip.tones import TONES

_ACTING_ROLES = " / ".join(e.roles[0] for e in REGISTRY.values() if e.cooperative_action)
"""The first roles whose action the tone figure shows (donor / player_1 / seller)."""


def load_tables(store: str | Path) -> dict[str, pl.DataFrame]:
    """``gossip_rounds``, ``gossip_agent_metrics``, ``gossip_run_metrics`` and ``gossip_cells``
    (with the condition flags ``gossip`` and ``attacker`` unpacked) from the store, read-only."""
    con = open_duckdb(store, read_only=True, purpose="gossip figures")
    try:
        names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        out = {
            name: con.sql(f"SELECT * FROM {name}").pl()
            for name in ("gossip_rounds", "gossip_agent_metrics", "gossip_run_metrics", "gossip_cells")
            if name in names
        }
    finally:
        con.close()
    cells = out.get("gossip_cells", pl.DataFrame({"cell_id": [], "condition_flags": []}, schema={"cell_id": pl.String, "condition_flags": pl.String}))
    flags = [json.loads(f) for f in cells["condition_flags"].to_list()]
    out["flags"] = pl.DataFrame(
        {
            "cell_id": cells["cell_id"].cast(pl.String).to_list(),
            "gossip": [bool(f.get("gossip", True)) for f in flags],
            "attacker": [str(f.get("attacker", "none")) for f in flags],
        },
        schema={"cell_id": pl.String, "gossip": pl.Boolean, "attacker": pl.String},
    )
    return out


def _honest_conditions(rounds: pl.DataFrame, flags: pl.DataFrame) -> pl.DataFrame:
    joined = rounds.join(flags, on="cell_id", how="left")
    return joined.filter(pl.col("attacker").fill_null("none") == "none")


def _model_by_testbed(chart: Any, width: int, height: int, title: str) -> Any:
    """``chart`` (``width`` × ``height`` px per panel) faceted by model (columns) and testbed
    (rows, in the registry's order), under ``title``."""
    import altair as alt

    return (
        chart.properties(width=width, height=height)
        .facet(column=alt.Column("model:N", title=None), row=alt.Row("testbed:N", title=None, sort=list(TESTBEDS)))
        .properties(title=title)
    )


def _cooperation_lines(frame: pl.DataFrame, x: str, x_title: str, y_title: str, keys: list[str], **encodings: Any) -> Any:
    """Lines with points of the ``cooperation`` share (0–1) against ``x``, one colour per
    condition, tooltips ``keys`` + cooperation + n, plus any further ``encodings``."""
    import altair as alt

    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X(f"{x}:Q", title=x_title),
            y=alt.Y("cooperation:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("condition:N"),
            tooltip=[*keys, alt.Tooltip("cooperation:Q", format=".2f"), "n"],
            **encodings,
        )
    )


def cooperation_by_round_chart(rounds: pl.DataFrame, flags: pl.DataFrame) -> Any:
    """Share of cooperative actions per round, gossip on (solid) vs off (dashed); one line per
    condition without attackers (γ-sweep conditions left out), facets model × testbed."""
    import altair as alt

    honest = _honest_conditions(rounds, flags).filter(~pl.col("condition").str.starts_with("gamma="))
    frame = cooperation_by_round(honest)
    if frame.height == 0:
        return note_chart("Cooperation by round: no rounds without attackers in the store")
    gossip = honest.select("condition", pl.col("gossip").fill_null(True)).unique("condition")
    frame = frame.join(gossip, on="condition", how="left").with_columns(
        pl.when(pl.col("gossip")).then(pl.lit("gossip on")).otherwise(pl.lit("gossip off")).alias("gossip")
    )
    chart = _cooperation_lines(
        frame, "round", "round", "share of cooperative actions", ["model", "testbed", "condition", "round"],
        strokeDash=alt.StrokeDash(
            "gossip:N", title="gossip", scale=alt.Scale(domain=["gossip on", "gossip off"], range=[[1, 0], [6, 4]])
        ),
    )
    return _model_by_testbed(chart, 300, 180, "Cooperation by round with vs without gossip")


def tone_by_action_chart(rounds: pl.DataFrame) -> Any:
    """Tone distribution of honest witnesses given the first agent's action (the donor's, player
    1's, the seller's: each testbed's first role), per model and testbed."""
    import altair as alt

    frame = tone_distribution(rounds.filter(pl.col("first_action").is_not_null()))
    if frame.height == 0:
        return note_chart("Tone by action: no toned gossip in the store")
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("action:N", title=f"{_ACTING_ROLES}'s action"),
            y=alt.Y("share:Q", title="share of messages", stack="normalize"),
            color=alt.Color("tone:N", sort=list(TONES), scale=alt.Scale(domain=list(TONES))),
            tooltip=["model", "testbed", "action", "tone", "n", alt.Tooltip("share:Q", format=".2f")],
        )
    )
    return _model_by_testbed(chart, 140, 180, f"Gossip tone given the {_ACTING_ROLES}'s action")


def max_cooperation_chart(rounds: pl.DataFrame) -> Any:
    """Honest donors' cooperation toward Max by Max's interaction index (docs/protocol/gossip.md#greedy-defector)."""
    import altair as alt

    frame = cooperation_by_interaction_index(rounds, "max")
    if frame.height == 0:
        return note_chart("Cooperation toward Max: no Max cells in the store")
    chart = _cooperation_lines(
        frame, "target_index", "Max's interaction index", "share of donors cooperating with Max", ["model", "condition", "target_index"]
    )
    return (
        chart.properties(width=300, height=180)
        .facet(column=alt.Column("model:N", title=None))
        .properties(title="Cooperation toward Max by interaction index")
    )


def attack_returns_chart(agent_metrics: pl.DataFrame) -> Any:
    """Mean discounted return G of honest agents vs attackers (Max, collusive), per condition."""
    import altair as alt

    attacked = agent_metrics.filter(pl.col("kind") != "honest").select("cell_id").unique()
    frame = (
        agent_metrics.join(attacked, on="cell_id")
        .with_columns(pl.when(pl.col("kind") == "honest").then(pl.lit("honest")).otherwise(pl.lit("attacker")).alias("side"))
        .group_by(["model", "testbed", "condition", "side"])
        .agg(pl.col("discounted_return").mean().alias("G"), pl.len().alias("n_agents"))
        .sort(["model", "testbed", "condition", "side"])
    )
    if frame.height == 0:
        return note_chart("Honest vs attacker returns: no attacker cells in the store")
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("side:N", title=None, sort=["honest", "attacker"]),
            y=alt.Y("G:Q", title="mean discounted return G"),
            color=alt.Color("side:N", sort=["honest", "attacker"]),
            column=alt.Column("condition:N", title=None),
            row=alt.Row("model:N", title=None),
            tooltip=["model", "testbed", "condition", "side", alt.Tooltip("G:Q", format=".3f"), "n_agents"],
        )
        .properties(width=90, height=160, title="Honest vs attacker returns")
    )


_RUN_COUNTS = ("n_replicates", "n_valid_cooperation_ratio", "failed_runs", "n_failed_rounds")
"""Tooltip fields of a summary point: runs played, runs its mean used, runs whose every round
failed (left out), failed rounds (issue 36)."""


def _marked(summary: pl.DataFrame) -> pl.DataFrame:
    """``summary`` with ``runs``: ``"k/n runs"`` (runs used of runs played) and a ``¶`` when some
    rounds failed, the label a point carries when its mean is not over every run."""
    return summary.with_columns(
        (
            pl.col("n_valid_cooperation_ratio").cast(pl.String) + "/" + pl.col("n_replicates").cast(pl.String) + " runs"
            + pl.when(pl.col("n_failed_rounds") > 0).then(pl.lit(" ¶")).otherwise(pl.lit(""))
        ).alias("runs"),
        ((pl.col("n_valid_cooperation_ratio") < pl.col("n_replicates")) | (pl.col("n_failed_rounds") > 0)).alias("incomplete"),
    )


def ablations_chart(summary: pl.DataFrame) -> Any:
    """Cooperation ratio (mean ± s.e.) per condition, per model and testbed (γ sweep apart); a
    bar whose mean used fewer runs than were played, or whose runs had failed rounds, is labelled
    ``k/n runs`` (``¶``: failed rounds)."""
    import altair as alt

    frame = summary.filter(~pl.col("condition").str.starts_with("gamma="))
    if frame.height == 0:
        return note_chart("Ablations: no runs in the store")
    frame = _marked(frame).with_columns(
        (pl.col("cooperation_ratio") - pl.col("cooperation_ratio_se").fill_nan(0)).alias("low"),
        (pl.col("cooperation_ratio") + pl.col("cooperation_ratio_se").fill_nan(0)).alias("high"),
    )
    base = alt.Chart().encode(x=alt.X("condition:N", title=None))
    bars = base.mark_bar().encode(
        y=alt.Y("cooperation_ratio:Q", title="cooperation ratio"),
        color=alt.Color("condition:N", legend=None),
        tooltip=["model", "testbed", "condition", alt.Tooltip("cooperation_ratio:Q", format=".3f"), *_RUN_COUNTS],
    )
    errors = base.mark_rule().encode(y="low:Q", y2="high:Q")
    labels = base.mark_text(dy=-8, fontSize=9).encode(y="high:Q", text="runs:N").transform_filter(alt.datum.incomplete)
    chart = alt.layer(bars, errors, labels, data=frame)
    return _model_by_testbed(chart, 260, 180, "Cooperation ratio by condition (ablations)")


def gamma_sweep_chart(summary: pl.DataFrame) -> Any:
    """Cooperation ratio against the discount factor γ of the γ-sweep conditions."""
    import altair as alt

    frame = summary.filter(pl.col("condition").str.starts_with("gamma="))
    if frame.height == 0:
        return note_chart("γ sweep: no gamma_sweep cells in the store")
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("gamma:Q", title="γ", scale=alt.Scale(type="log")),
            y=alt.Y("cooperation_ratio:Q", title="cooperation ratio", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N"),
            tooltip=["model", "testbed", "gamma", alt.Tooltip("cooperation_ratio:Q", format=".3f"), *_RUN_COUNTS],
        )
        .properties(width=300, height=180)
        .facet(column=alt.Column("testbed:N", title=None, sort=list(TESTBEDS)))
        .properties(title="Cooperation ratio across the γ sweep")
    )


def render_figures(store: str | Path, out_dir: str | Path, formats: Sequence[str]) -> list[Path]:
    """Write every figure of :data:`.catalog.FIGURES` into ``out_dir``."""
    tables = load_tables(store)
    rounds, flags = tables["gossip_rounds"], tables["flags"]
    summary = replicate_summary(tables["gossip_run_metrics"]) if tables["gossip_run_metrics"].height else pl.DataFrame(
        schema={"condition": pl.String}
    )
    charts = {
        "gossip_cooperation_by_round": lambda: cooperation_by_round_chart(rounds, flags),
        "gossip_tone_by_action": lambda: tone_by_action_chart(rounds),
        "gossip_max_cooperation": lambda: max_cooperation_chart(rounds),
        "gossip_attack_returns": lambda: attack_returns_chart(tables["gossip_agent_metrics"]),
        "gossip_ablations": lambda: ablations_chart(summary),
        "gossip_gamma_sweep": lambda: gamma_sweep_chart(summary),
    }
    written: list[Path] = []
    for entry in FIGURES:
        written += save_chart(charts[entry.stem](), Path(out_dir) / entry.stem, formats)
    return written


def render_tables(store: str | Path, testbeds: Sequence[str], table_dir: str | Path, page_dir: str | Path) -> list[Path]:
    """The Tables 1–2 layout per testbed: ``<table_dir>/gossip_<testbed>.{csv,md,tex}`` and the
    report page ``<page_dir>/gossip_<testbed>.html``."""
    runs = load_tables(store)["gossip_run_metrics"]
    summary = replicate_summary(runs) if runs.height else None
    written = []
    for testbed in sorted(testbeds, key=TESTBEDS.index):
        table = paper_table(summary, testbed) if summary is not None else paper_table(pl.DataFrame(schema={"testbed": pl.String}), testbed)
        stem = f"gossip_{testbed}"
        texts = {"csv": table.write_csv(), "md": to_markdown(table), "tex": to_latex(table)}
        for fmt in TABLE_FORMATS:
            path = Path(table_dir) / f"{stem}.{fmt}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(texts[fmt], encoding="utf-8")
            written.append(path)
        page = Path(page_dir) / f"{stem}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in table.iter_rows())
        notes = "".join(f"<p>{html.escape(note)}</p>" for note in footnotes(table))
        page.write_text(
            f"<!doctype html><meta charset='utf-8'><title>{stem}</title>"
            f"<h1>Gossip · {html.escape(REGISTRY[testbed].title)}: Tables 1–2 layout (mean ± s.e.)</h1>"
            f"<table border='1' cellpadding='4'><tr>{head}</tr>{body}</table>{notes}\n",
            encoding="utf-8",
        )
        written.append(page)
    return written
