"""Render the analyses' figures from the store (opened read-only).

Frames come from :mod:`coopeval.studies.coopeval.analysis` (one small aggregated frame per figure); only the
default-parameter cells are used (variants are ablations, plotted by the core figures). A figure
without data is written as a one-line chart saying why, so every declared output exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.charts import save_chart
from coopeval.core.duckdb_settings import open_duckdb
from coopeval.core.schemas import empty_frame
from coopeval.games import get_game
from coopeval.studies.coopeval.analysis.actions import action_probabilities
from coopeval.studies.coopeval.analysis.conditional import conditional_action_frequencies
from coopeval.studies.coopeval.analysis.design_rates import design_rate_frame
from coopeval.studies.coopeval.analysis.justifications import excluded_games, justification_shares
from coopeval.studies.coopeval.analysis.voting import voting_adoption
from coopeval.studies.coopeval.figures.analyses import (
    action_probability_chart,
    conditional_chart,
    design_quality_chart,
    justification_heatmap_chart,
    justification_radar_chart,
    note_chart,
    voting_chart,
)
from coopeval.studies.coopeval.figures.catalog import analysis_figures

__all__ = ["load_analysis_tables", "render_analysis_figures"]

_DECISION_COLUMNS = "cell_id, mechanism, game, decision_id, matchup_id, match_id, round, seat, agent, kind, status, parsed, action, mediated"


def load_analysis_tables(store: str | Path) -> dict[str, pl.DataFrame]:
    """The store tables the analyses read, restricted to default-parameter cells."""

    con = open_duckdb(store, read_only=True, purpose="CoopEval analyses")
    try:
        present = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
        default = (
            "cell_id IN (SELECT cell_id FROM cells WHERE variant = 'default')"
            if "cells" in present
            else "TRUE"
        )
        tables = {
            "decisions": con.sql(f"SELECT {_DECISION_COLUMNS} FROM decisions WHERE {default}").pl(),
            "votes": con.sql(f"SELECT * FROM votes WHERE {default}").pl(),
            "selections": con.sql(f"SELECT * FROM selections WHERE {default}").pl(),
            "matchups": con.sql(f"SELECT * FROM matchups WHERE {default}").pl(),
            "design_quality_summary": (
                con.sql("SELECT * FROM design_quality_summary").pl()
                if "design_quality_summary" in present
                else pl.DataFrame()
            ),
        }
        if "judgements" in present:
            tables["judgements"] = con.sql(f"SELECT * FROM judgements WHERE {default}").pl()
        else:
            tables["judgements"] = empty_frame("judgements")
    finally:
        con.close()
    return tables


def render_analysis_figures(
    store: str | Path,
    out_dir: str | Path,
    mechanisms: Sequence[str],
    games: Sequence[str],
    formats: Sequence[str],
    labels: Sequence[str],
    denominator: str = "judged",
) -> list[Path]:
    """Write every figure of :func:`coopeval.studies.coopeval.figures.catalog.analysis_figures`.

    Parameters
    ----------
    labels:
        The judge taxonomy's labels in prompt order (rows of the justification figures).
    denominator:
        ``"judged"`` (correct) or ``"reference"`` (``compat.judge_share_denominator``).
    """
    out = Path(out_dir)
    t = load_analysis_tables(store)
    names = {key: get_game(key).name for key in games}
    titles = {key: get_game(key).title for key in games}
    charts: dict[str, Any] = {}
    what = (
        "share of judged decisions"
        if denominator == "judged"
        else "share (reference's inflated denominator)"
    )

    pooled = action_probabilities(t["decisions"], by=("mechanism",))
    charts["actions_by_mechanism"] = (
        action_probability_chart(
            pooled, "mechanism", "Mean stated action probabilities by mechanism (all agents pooled)"
        )
        if pooled.height
        else note_chart("No successful action decisions.")
    )
    per_model = action_probabilities(t["decisions"], by=("mechanism", "agent"))
    conditional = conditional_action_frequencies(t["decisions"])
    voting = voting_adoption(t["votes"], t["selections"], t["matchups"], t["decisions"])
    rates = (
        design_rate_frame(t["design_quality_summary"])
        if t["design_quality_summary"].height
        else pl.DataFrame()
    )
    judged = t["judgements"]
    n_ok = judged.filter(pl.col("status") == "ok").height
    excluded = ", ".join(excluded_games())

    def shares(by: Sequence[str], exclude: Sequence[str] | None = None) -> pl.DataFrame:
        return justification_shares(judged, by, labels, denominator=denominator, exclude_games=exclude)  # type: ignore[arg-type]

    no_judgements = f"No judged decisions ({judged.height} judgements, {n_ok} successful): the judge labels CoT agents' reasoning only."
    by_mechanism = shares(["mechanism"])
    if by_mechanism.height:
        charts["justifications_by_mechanism"] = justification_heatmap_chart(
            by_mechanism,
            "mechanism",
            labels,
            f"Justifications by mechanism ({what}; without {excluded})",
        )
        charts["justifications_radar"] = justification_radar_chart(
            by_mechanism, "mechanism", labels, f"Justifications by mechanism ({what})"
        )
    by_model = shares(["agent"])
    if by_model.height:
        charts["justifications_by_model"] = justification_heatmap_chart(
            by_model, "agent", labels, f"Justifications by model ({what}; without {excluded})"
        )
    by_game = shares(["game"], exclude=())
    if by_game.height:
        charts["justifications_by_game"] = justification_heatmap_chart(
            by_game, "game", labels, f"Justifications by game ({what})"
        )
    detail = shares(["mechanism", "agent", "game"], exclude=())

    for mechanism in mechanisms:
        frame = per_model.filter(pl.col("mechanism") == mechanism)
        charts[f"actions_by_model_{mechanism}"] = (
            action_probability_chart(
                frame, "agent", f"{mechanism}: mean stated action probabilities by agent"
            )
            if frame.height
            else note_chart(f"{mechanism}: no successful action decisions.")
        )
        frame = detail.filter(pl.col("mechanism") == mechanism)
        charts[f"justifications_{mechanism}"] = (
            justification_heatmap_chart(
                frame,
                "agent",
                labels,
                f"{mechanism}: justifications by agent and game ({what})",
                column="game",
            )
            if frame.height
            else note_chart(f"{mechanism}: {no_judgements}")
        )
        frame = rates.filter(pl.col("mechanism") == mechanism) if rates.height else rates
        charts[f"design_quality_{mechanism}"] = (
            design_quality_chart(frame, f"{mechanism}: NS / WD rates of submitted designs")
            if frame.height
            else note_chart(f"{mechanism}: no valid designs to check.")
        )
        for key in games:
            label = f"{mechanism} · {titles[key]}"
            in_cell = (pl.col("mechanism") == mechanism) & (pl.col("game") == names[key])
            frame = conditional.filter(in_cell)
            charts[f"conditional_{mechanism}_{key}"] = (
                conditional_chart(
                    frame, f"{label}: own action given the co-player's previous action"
                )
                if frame.height
                else note_chart(f"{label}: no decisions after round 1.")
            )
            frame = voting.filter(in_cell)
            charts[f"voting_{mechanism}_{key}"] = (
                voting_chart(frame, f"{label}: voting and adoption")
                if frame.height
                else note_chart(f"{label}: no votes or moves recorded.")
            )
    for name in (
        "justifications_by_mechanism",
        "justifications_radar",
        "justifications_by_model",
        "justifications_by_game",
    ):
        charts.setdefault(name, note_chart(no_judgements))

    written: list[Path] = []
    for entry in analysis_figures(mechanisms, games):
        written += save_chart(charts[entry.stem], out / entry.stem, formats)
    return written
