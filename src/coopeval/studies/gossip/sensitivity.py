"""The gossip study's prompt sensitivity report (issue 23 item 4, docs/paraphrases.md): each
population model's cooperation ratio and discounted return per prompt variant, the variance
shares of model, variant and their interaction, and whether each pairwise ordering holds under
every variant (:func:`coopeval.evaluation.sensitivity.prompt_sensitivity`).

A context is one (testbed, condition, replicate): the same schedule and seeds in every wording.
The values are the run means of the ``gossip_run_metrics`` table (docs/protocol/gossip.md#metrics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.prompts import BASE_VARIANT
from coopeval.evaluation.sensitivity import Sensitivity, prompt_sensitivity
from coopeval.evaluation.sensitivity_report import write_sensitivity_report

__all__ = ["GOSSIP_SENSITIVITY_FIGURE", "GOSSIP_SENSITIVITY_PAGE", "GOSSIP_SENSITIVITY_TABLES", "SENSITIVITY_METRICS",
           "cell_contexts", "render_gossip_sensitivity"]

SENSITIVITY_METRICS = {"cooperation ratio": "cooperation_ratio_mean", "discounted return": "discounted_return_mean"}
"""Metric title → column of ``gossip_run_metrics``."""
GOSSIP_SENSITIVITY_FIGURE = "gossip_prompt_sensitivity"
"""The figure's stem (``results/figures/gossip_prompt_sensitivity.<format>``)."""
GOSSIP_SENSITIVITY_PAGE = "results/report/gossip_prompt_sensitivity.html"
"""The report page with the three tables."""
GOSSIP_SENSITIVITY_TABLES = {
    "per_variant": "results/tables/gossip_prompt_sensitivity.csv",
    "shares": "results/tables/gossip_prompt_sensitivity_shares.csv",
    "orderings": "results/tables/gossip_prompt_sensitivity_orderings.csv",
    "markdown": "results/tables/gossip_prompt_sensitivity.md",
}
"""The tables (keys of :data:`coopeval.evaluation.sensitivity_report.TABLE_KEYS`)."""
TITLE = "Gossip prompt sensitivity: each population model's metric under each wording"


def cell_contexts(cells: Sequence[Mapping[str, Any]], model_name: Any) -> dict[str, dict[str, str]]:
    """cell id → its model's display name (``model_name(entry)``), prompt variant and context
    (``<testbed>/<condition>/r<replicate>``)."""
    return {
        str(c["cell_id"]): {
            "model": str(model_name(c["model"])),
            "prompt_variant": str(c.get("prompt_variant", BASE_VARIANT)),
            "context": f"{c['testbed']}/{c['condition']['name']}/r{c['replicate']}",
        }
        for c in cells
    }


def sensitivity_values(run_metrics: pl.DataFrame, contexts: Mapping[str, Mapping[str, str]], column: str) -> pl.DataFrame:
    """The ``prompt_sensitivity`` input of one ``gossip_run_metrics`` column (rows of cells
    missing from ``contexts`` are ignored)."""
    rows = [
        {**{k: contexts[cid][k] for k in ("model", "prompt_variant", "context")}, "value": float(v)}
        for cid, v in zip(run_metrics["cell_id"], run_metrics[column], strict=True)
        if cid in contexts and v is not None
    ]
    schema = {"model": pl.String, "prompt_variant": pl.String, "context": pl.String, "value": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def render_gossip_sensitivity(
    run_metrics_files: Sequence[str | Path],
    contexts: Mapping[str, Mapping[str, str]],
    tables: Mapping[str, str | Path],
    figure_stem: str | Path,
    page: str | Path,
    formats: Sequence[str],
) -> dict[str, Sensitivity]:
    """Read the cells' ``gossip_run_metrics`` files, compute the sensitivity of each metric of
    :data:`SENSITIVITY_METRICS` that has a value under every variant, and write the report
    (:func:`~coopeval.evaluation.sensitivity_report.write_sensitivity_report`)."""
    frames = [pl.read_parquet(f, columns=["cell_id", *SENSITIVITY_METRICS.values()]) for f in run_metrics_files]
    run_metrics = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(
        schema={"cell_id": pl.String, **dict.fromkeys(SENSITIVITY_METRICS.values(), pl.Float64)})
    results = {}
    for title, column in SENSITIVITY_METRICS.items():
        try:
            results[title] = prompt_sensitivity(sensitivity_values(run_metrics, contexts, column))
        except ValueError:
            continue
    write_sensitivity_report(results, tables, figure_stem, page, formats, TITLE)
    return results
