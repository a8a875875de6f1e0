"""CoopEval's prompt sensitivity report (issue 23 item 4, docs/paraphrases.md): each agent's
normalised Mean and Fitness per prompt variant, the variance shares of agent, variant and their
interaction, and whether each pairwise ordering holds under every variant
(:func:`coopeval.evaluation.sensitivity.prompt_sensitivity`).

A context is one (mechanism, mechanism variant, game, replicate): the same matches played in
every wording. Values are normalised per game, (x − NE) / (coop − NE)
(docs/protocol/games.md#normalisation), so that games weigh alike, as in the aggregate table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.prompts import BASE_VARIANT
from coopeval.evaluation.sensitivity import Sensitivity, prompt_sensitivity
from coopeval.games import get_game
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE

__all__ = [
    "SENSITIVITY_FIGURE",
    "SENSITIVITY_METRICS",
    "SENSITIVITY_PAGE",
    "SENSITIVITY_TABLES",
    "cell_contexts",
    "sensitivity_by_metric",
    "sensitivity_values",
]

SENSITIVITY_METRICS = ("Mean", "Fitness")
"""The metrics compared across wordings (normalised per game)."""
SENSITIVITY_FIGURE = "prompt_sensitivity"
"""The figure's stem (``results/figures/prompt_sensitivity.<format>``)."""
SENSITIVITY_PAGE = "results/report/prompt_sensitivity.html"
"""The report page with the three tables."""
SENSITIVITY_TABLES = {
    "per_variant": "results/tables/prompt_sensitivity.csv",
    "shares": "results/tables/prompt_sensitivity_shares.csv",
    "orderings": "results/tables/prompt_sensitivity_orderings.csv",
    "markdown": "results/tables/prompt_sensitivity.md",
}
"""The sensitivity tables: per-variant values, variance shares, pairwise orderings (CSV) and all three as Markdown."""


def cell_contexts(cells: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """cell id → its prompt variant, context label and game (key and parameters), the facts the
    sensitivity rule needs of each cell (passed as a Snakemake param)."""
    return {
        str(c["cell_id"]): {
            "prompt_variant": str(c.get("prompt_variant", BASE_VARIANT)),
            "context": f"{c['mechanism']}/{c['variant']}/{c['game']}/r{c['replicate']}",
            "game": str(c["game"]),
            "game_params": dict(c.get("game_params") or {}),
        }
        for c in cells
    }


def sensitivity_values(metrics: pl.DataFrame, contexts: Mapping[str, Mapping[str, Any]], metric: str) -> pl.DataFrame:
    """The ``prompt_sensitivity`` input of one metric: one normalised value per (agent, prompt
    variant, context) from the cells' ``metrics`` rows (the LLM Average row left out).

    Raises
    ------
    KeyError
        If a metrics row belongs to a cell missing from ``contexts``.
    """
    rows = metrics.filter((pl.col("metric") == metric) & (pl.col("agent") != LLM_AVERAGE) & pl.col("value").is_not_null())
    out = []
    for row in rows.iter_rows(named=True):
        cell = contexts[row["cell_id"]]
        game = get_game(cell["game"], **cell["game_params"])
        out.append({"model": row["agent"], "prompt_variant": cell["prompt_variant"], "context": cell["context"],
                    "value": game.normalise(float(row["value"]))})
    schema = {"model": pl.String, "prompt_variant": pl.String, "context": pl.String, "value": pl.Float64}
    return pl.DataFrame(out, schema=schema)


def sensitivity_by_metric(metrics: pl.DataFrame, contexts: Mapping[str, Mapping[str, Any]]) -> dict[str, Sensitivity]:
    """:func:`prompt_sensitivity` of every metric in :data:`SENSITIVITY_METRICS` that has a
    balanced design (e.g. Fitness is missing when only Reputation cells ran)."""
    out = {}
    for metric in SENSITIVITY_METRICS:
        values = sensitivity_values(metrics, contexts, metric)
        try:
            out[metric] = prompt_sensitivity(values)
        except ValueError:
            continue
    return out


def sensitivity_tables(results: Mapping[str, Sensitivity]) -> dict[str, pl.DataFrame]:
    """The three tables over every metric (a ``metric`` column first)."""
    def stacked(part: str) -> pl.DataFrame:
        frames = [getattr(r, part).select(pl.lit(m).alias("metric"), pl.all()) for m, r in results.items()]
        return pl.concat(frames) if frames else pl.DataFrame({"metric": []}, schema={"metric": pl.String})

    return {"per_variant": stacked("per_variant"), "shares": stacked("shares"), "orderings": stacked("orderings")}


def markdown(results: Mapping[str, Sensitivity]) -> str:
    """All three tables as Markdown: per metric, the agents × variants values, the variance
    shares and, per pair, the deltas under each variant and whether the ordering holds."""
    lines = ["# Prompt sensitivity", ""]
    if not results:
        return "\n".join([*lines, "No metric has a value for every agent under every prompt variant.", ""])
    for metric, r in results.items():
        variants = list(dict.fromkeys(r.per_variant["prompt_variant"].to_list()))
        lines += [f"## {metric} (normalised)", "", f"Variance shares over {r.contexts_used} contexts ({r.contexts_dropped} left out) of {', '.join(r.models)}.", ""]
        lines += ["| agent | " + " | ".join(variants) + " |", "|---|" + "---:|" * len(variants)]
        for model, group in r.per_variant.group_by("model", maintain_order=True):
            lines.append(f"| {model[0]} | " + " | ".join(f"{v:.4f}" for v in group["value"]) + " |")
        lines += ["", "| source | sum of squares | df | share |", "|---|---:|---:|---:|"]
        lines += [f"| {s} | {ss:.6g} | {df} | {share:.1%} |" for s, ss, df, share in r.shares.iter_rows()]
        lines += ["", "| a | b | " + " | ".join(f"Δ {v}" for v in variants) + " | ordering holds |", "|---|---|" + "---:|" * len(variants) + "---|"]
        for (a, b), group in r.orderings.group_by(["a", "b"], maintain_order=True):
            holds = "yes" if group["holds"][0] else "no"
            lines.append(f"| {a} | {b} | " + " | ".join(f"{d:+.4f}" for d in group["delta"]) + f" | {holds} |")
        lines.append("")
    return "\n".join(lines)


def write_sensitivity_tables(results: Mapping[str, Sensitivity], paths: Mapping[str, str | Path]) -> None:
    """Write :data:`SENSITIVITY_TABLES` (keys of ``paths``): three CSVs and the Markdown file."""
    for name, frame in sensitivity_tables(results).items():
        Path(paths[name]).parent.mkdir(parents=True, exist_ok=True)
        frame.write_csv(paths[name])
    Path(paths["markdown"]).write_text(markdown(results), encoding="utf-8")
