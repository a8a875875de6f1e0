"""Writing a prompt sensitivity result (:mod:`.sensitivity`) as tables, a figure and an HTML page,
shared by the studies that vary the wording (docs/paraphrases.md#the-sensitivity-report).

A study declares its report once as a :class:`SensitivitySource` (its metrics, how its cells'
files are read and turned into values, the output paths and the title);
:func:`render_sensitivity_report` serves every study from that declaration."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.charts import note_chart, save_chart
from coopeval.evaluation.sensitivity import Sensitivity, prompt_sensitivity

__all__ = [
    "TABLE_KEYS",
    "SensitivitySource",
    "render_sensitivity_report",
    "sensitivity_by_metric",
    "sensitivity_chart",
    "sensitivity_markdown",
    "sensitivity_tables",
    "write_sensitivity_report",
]

TABLE_KEYS = ("per_variant", "shares", "orderings", "markdown")
"""The table files of a report: three CSVs (per-variant values, variance shares, orderings) and the Markdown of all three."""


def sensitivity_tables(results: Mapping[str, Sensitivity]) -> dict[str, pl.DataFrame]:
    """The three tables over every metric of ``results`` (metric name → result), a ``metric`` column first."""

    def stacked(part: str) -> pl.DataFrame:
        frames = [getattr(r, part).select(pl.lit(m).alias("metric"), pl.all()) for m, r in results.items()]
        return pl.concat(frames) if frames else pl.DataFrame(schema={"metric": pl.String})

    return {"per_variant": stacked("per_variant"), "shares": stacked("shares"), "orderings": stacked("orderings")}


def sensitivity_markdown(results: Mapping[str, Sensitivity], title: str) -> str:
    """All three tables as Markdown: per metric, the models × variants values, the variance
    shares and, per pair, the deltas under each variant and whether the ordering holds."""
    lines = [f"# {title}", ""]
    if not results:
        return "\n".join([*lines, "No metric has a value under every prompt variant.", ""])
    for metric, r in results.items():
        variants = list(dict.fromkeys(r.per_variant["prompt_variant"].to_list()))
        lines += [f"## {metric}", "",
                  f"Variance shares over {r.contexts_used} contexts ({r.contexts_dropped} left out) of {', '.join(r.models)}.", ""]
        lines += ["| model | " + " | ".join(variants) + " |", "|---|" + "---:|" * len(variants)]
        for model, group in r.per_variant.group_by("model", maintain_order=True):
            lines.append(f"| {model[0]} | " + " | ".join(f"{v:.4f}" for v in group["value"]) + " |")
        lines += ["", "| source | sum of squares | df | share |", "|---|---:|---:|---:|"]
        lines += [f"| {s} | {ss:.6g} | {df} | {share:.1%} |" for s, ss, df, share in r.shares.iter_rows()]
        if r.orderings.height:
            lines += ["", "| a | b | " + " | ".join(f"Δ {v}" for v in variants) + " | ordering holds |",
                      "|---|---|" + "---:|" * len(variants) + "---|"]
            for (a, b), group in r.orderings.group_by(["a", "b"], maintain_order=True):
                holds = "yes" if group["holds"][0] else "no"
                lines.append(f"| {a} | {b} | " + " | ".join(f"{d:+.4f}" for d in group["delta"]) + f" | {holds} |")
        lines.append("")
    return "\n".join(lines)


def _shares_text(result: Sensitivity) -> str:
    shares = dict(zip(result.shares["source"], result.shares["share"], strict=True))
    return ", ".join(f"{source} {shares[source]:.0%}" for source in ("model", "prompt variant", "model × prompt variant"))


def sensitivity_chart(results: Mapping[str, Sensitivity], title: str) -> Any:
    """Each model's metric per prompt variant: lines across the variants, one panel per metric,
    the variance shares of model, variant and interaction in the panel subtitle; a note chart
    when ``results`` is empty."""
    import altair as alt

    if not results:
        return note_chart(f"{title}: no metric has a value under every prompt variant")
    panels = []
    for metric, result in results.items():
        data = result.per_variant
        variants = list(dict.fromkeys(data["prompt_variant"].to_list()))
        panels.append(
            alt.Chart(data)
            .mark_line(point=True)
            .encode(
                x=alt.X("prompt_variant:N", title="prompt variant", sort=variants),
                y=alt.Y("value:Q", title=metric),
                color=alt.Color("model:N", title="model"),
                tooltip=["model", "prompt_variant", alt.Tooltip("value:Q", format=".4f"), "n_contexts"],
            )
            .properties(width=260, height=200, title=alt.TitleParams(metric, subtitle=f"variance share: {_shares_text(result)}"))
        )
    return alt.hconcat(*panels).properties(title=title)


def _cell(value: object) -> str:
    return f"<td>{value:.4g}</td>" if isinstance(value, float) else f"<td>{html.escape(str(value))}</td>"


def _table_html(frame: pl.DataFrame) -> str:
    if frame.height == 0:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in frame.iter_rows())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _page(results: Mapping[str, Sensitivity], title: str) -> str:
    titles = {"per_variant": "Metric per prompt variant", "shares": "Variance shares", "orderings": "Pairwise orderings"}
    body = [f"<h1>{html.escape(title)}</h1>",
            "<p>Each model's metric per prompt variant, the variance shares (model, variant, interaction, context, "
            "residual) and the pairwise orderings under each variant (docs/paraphrases.md).</p>"]
    for name, frame in sensitivity_tables(results).items():
        body += [f"<h2>{titles[name]}</h2>", _table_html(frame)]
    style = "body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:2px 8px}"
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>")


def write_sensitivity_report(
    results: Mapping[str, Sensitivity],
    tables: Mapping[str, str | Path],
    figure_stem: str | Path,
    page: str | Path,
    formats: Sequence[str],
    title: str,
) -> None:
    """Write the tables (``tables``: a path per :data:`TABLE_KEYS` entry), the figure
    (``figure_stem`` in each format, :func:`coopeval.core.charts.save_chart`) and the HTML page."""
    for name, frame in sensitivity_tables(results).items():
        Path(tables[name]).parent.mkdir(parents=True, exist_ok=True)
        frame.write_csv(tables[name])
    Path(tables["markdown"]).write_text(sensitivity_markdown(results, title), encoding="utf-8")
    save_chart(sensitivity_chart(results, title), figure_stem, formats)
    Path(page).parent.mkdir(parents=True, exist_ok=True)
    Path(page).write_text(_page(results, title), encoding="utf-8")


@dataclass(frozen=True)
class SensitivitySource:
    """One study's prompt sensitivity report, declared once (docs/paraphrases.md#the-sensitivity-report).

    Attributes
    ----------
    stem:
        The report's file stem; every path derives from it (:attr:`figure`, :attr:`page`,
        :attr:`tables`).
    title:
        The title of the Markdown tables, the figure and the page.
    metrics:
        The metric names compared across wordings, in report order.
    read:
        The cells' files → one frame (with the columns ``values`` reads, also for no file).
    values:
        ``(frame, contexts, metric)`` → the :func:`~coopeval.evaluation.sensitivity.prompt_sensitivity`
        input of one metric (columns ``model``, ``prompt_variant``, ``context``, ``value``);
        ``contexts`` maps a cell id to the facts the study's rule passes for it.
    """

    stem: str
    title: str
    metrics: tuple[str, ...]
    read: Callable[[Sequence[str | Path]], pl.DataFrame]
    values: Callable[[pl.DataFrame, Mapping[str, Mapping[str, Any]], str], pl.DataFrame]

    @property
    def figure(self) -> str:
        """The figure's stem (``results/figures/<stem>.<format>``)."""
        return self.stem

    @property
    def page(self) -> str:
        """The report page with the three tables: ``results/report/<stem>.html``."""
        return f"results/report/{self.stem}.html"

    @property
    def tables(self) -> dict[str, str]:
        """The table files, one per :data:`TABLE_KEYS` entry: per-variant values, variance shares
        and pairwise orderings (CSV, ``results/tables/<stem>[_shares|_orderings].csv``) and all
        three as Markdown (``results/tables/<stem>.md``)."""
        base = f"results/tables/{self.stem}"
        return {"per_variant": f"{base}.csv", "shares": f"{base}_shares.csv",
                "orderings": f"{base}_orderings.csv", "markdown": f"{base}.md"}


def sensitivity_by_metric(
    source: SensitivitySource, frame: pl.DataFrame, contexts: Mapping[str, Mapping[str, Any]]
) -> dict[str, Sensitivity]:
    """:func:`~coopeval.evaluation.sensitivity.prompt_sensitivity` of every metric of ``source``
    whose values have a balanced design (a metric without a value under every variant, e.g.
    CoopEval's Fitness when only Reputation cells ran, is left out)."""
    out: dict[str, Sensitivity] = {}
    for metric in source.metrics:
        values = source.values(frame, contexts, metric)
        try:
            out[metric] = prompt_sensitivity(values)
        except ValueError:
            continue
    return out


def render_sensitivity_report(
    source: SensitivitySource,
    files: Sequence[str | Path],
    contexts: Mapping[str, Mapping[str, Any]],
    tables: Mapping[str, str | Path],
    figure_stem: str | Path,
    page: str | Path,
    formats: Sequence[str],
) -> dict[str, Sensitivity]:
    """Read the cells' ``files``, compute the sensitivity of every metric of ``source``
    (:func:`sensitivity_by_metric`) and write the tables, figure and page
    (:func:`write_sensitivity_report`); returns the results by metric."""
    results = sensitivity_by_metric(source, source.read(files), contexts)
    write_sensitivity_report(results, tables, figure_stem, page, formats, source.title)
    return results
