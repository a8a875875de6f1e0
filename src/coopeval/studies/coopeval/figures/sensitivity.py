"""The prompt sensitivity figure, tables and report page (docs/paraphrases.md), from the cells'
``metrics`` files (:mod:`coopeval.studies.coopeval.analysis.prompt_sensitivity`)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.charts import note_chart, save_chart
from coopeval.evaluation.sensitivity import Sensitivity
from coopeval.studies.coopeval.analysis.prompt_sensitivity import (
    sensitivity_by_metric,
    sensitivity_tables,
    write_sensitivity_tables,
)
from coopeval.studies.coopeval.figures.run_page import frame_to_html

__all__ = ["render_prompt_sensitivity", "sensitivity_chart"]


def _shares_text(result: Sensitivity) -> str:
    shares = dict(zip(result.shares["source"], result.shares["share"], strict=True))
    return ", ".join(f"{source} {shares[source]:.0%}" for source in ("model", "prompt variant", "model × prompt variant"))


def sensitivity_chart(results: Mapping[str, Sensitivity]) -> Any:
    """Each agent's normalised metric per prompt variant (lines across variants, one panel per
    metric, the variance shares of agent, variant and interaction in the panel title); a note
    chart when no metric has a balanced design."""
    import altair as alt

    if not results:
        return note_chart("prompt sensitivity: no metric has a value for every agent under every prompt variant")
    panels = []
    for metric, result in results.items():
        data = result.per_variant
        variants = list(dict.fromkeys(data["prompt_variant"].to_list()))
        panels.append(
            alt.Chart(data)
            .mark_line(point=True)
            .encode(
                x=alt.X("prompt_variant:N", title="prompt variant", sort=variants),
                y=alt.Y("value:Q", title=f"{metric} (normalised)"),
                color=alt.Color("model:N", title="agent"),
                tooltip=["model", "prompt_variant", alt.Tooltip("value:Q", format=".4f"), "n_contexts"],
            )
            .properties(width=260, height=200, title=alt.TitleParams(metric, subtitle=f"variance share: {_shares_text(result)}"))
        )
    return alt.hconcat(*panels).properties(title="Prompt sensitivity: each agent's metric under each wording")


def _page(results: Mapping[str, Sensitivity]) -> str:
    tables = sensitivity_tables(results)
    body = ["<h1>Prompt sensitivity</h1>",
            "<p>Normalised metric per agent and prompt variant, variance shares (model, variant, interaction, "
            "context = mechanism × game × replicate, residual) and pairwise orderings under each variant "
            "(docs/paraphrases.md).</p>"]
    titles = {"per_variant": "Metric per prompt variant", "shares": "Variance shares", "orderings": "Pairwise orderings"}
    for name, frame in tables.items():
        body += [f"<h2>{html.escape(titles[name])}</h2>", frame_to_html(frame)]
    style = "body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:2px 8px}"
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Prompt sensitivity</title><style>{style}</style></head><body>{''.join(body)}</body></html>"


def render_prompt_sensitivity(
    metrics_files: Sequence[str | Path],
    contexts: Mapping[str, Mapping[str, Any]],
    tables: Mapping[str, str | Path],
    figure_stem: str | Path,
    page: str | Path,
    formats: Sequence[str],
) -> dict[str, Sensitivity]:
    """Read the cells' metrics files, compute the sensitivity of every metric and write the
    tables (``tables``: the keys of ``SENSITIVITY_TABLES``), the figure (``figure_stem`` in each
    format) and the report page; returns the results by metric.

    ``contexts`` is :func:`~coopeval.studies.coopeval.analysis.prompt_sensitivity.cell_contexts`
    of the cells whose files are read.
    """
    metrics = pl.concat([pl.read_parquet(f) for f in metrics_files], how="diagonal_relaxed") if metrics_files else pl.DataFrame(
        schema={"cell_id": pl.String, "agent": pl.String, "metric": pl.String, "value": pl.Float64}
    )
    results = sensitivity_by_metric(metrics, contexts)
    write_sensitivity_tables(results, tables)
    save_chart(sensitivity_chart(results), figure_stem, formats)
    Path(page).parent.mkdir(parents=True, exist_ok=True)
    Path(page).write_text(_page(results), encoding="utf-8")
    return results
