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
from coopeval.evaluation.sensitivity_report import SensitivitySource

__all__ = [
    "SENSITIVITY",
    "SENSITIVITY_METRICS",
    "cell_contexts",
    "read_run_metrics",
    "sensitivity_values",
]

SENSITIVITY_METRICS = {"cooperation ratio": "cooperation_ratio_mean", "discounted return": "discounted_return_mean"}
"""Metric title → column of ``gossip_run_metrics``."""

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


def sensitivity_values(run_metrics: pl.DataFrame, contexts: Mapping[str, Mapping[str, Any]], metric: str) -> pl.DataFrame:
    """The ``prompt_sensitivity`` input of one metric of :data:`SENSITIVITY_METRICS` (rows of
    cells missing from ``contexts`` are ignored)."""
    column = SENSITIVITY_METRICS[metric]
    rows = [
        {**{k: contexts[cid][k] for k in ("model", "prompt_variant", "context")}, "value": float(v)}
        for cid, v in zip(run_metrics["cell_id"], run_metrics[column], strict=True)
        if cid in contexts and v is not None
    ]
    schema = {"model": pl.String, "prompt_variant": pl.String, "context": pl.String, "value": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def read_run_metrics(files: Sequence[str | Path]) -> pl.DataFrame:
    """The cells' ``gossip_run_metrics`` files as one frame: the cell id and the columns of
    :data:`SENSITIVITY_METRICS` (an empty frame with those columns for none)."""
    frames = [pl.read_parquet(f, columns=["cell_id", *SENSITIVITY_METRICS.values()]) for f in files]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(
        schema={"cell_id": pl.String, **dict.fromkeys(SENSITIVITY_METRICS.values(), pl.Float64)})


SENSITIVITY = SensitivitySource(
    "gossip_prompt_sensitivity", "Gossip prompt sensitivity: each population model's metric under each wording",
    tuple(SENSITIVITY_METRICS), read_run_metrics, sensitivity_values,
)
"""The gossip report (rule ``gossip_prompt_sensitivity``, :func:`~coopeval.evaluation.sensitivity_report.render_sensitivity_report`):
``results/tables/gossip_prompt_sensitivity*``, ``results/figures/gossip_prompt_sensitivity.<format>``,
``results/report/gossip_prompt_sensitivity.html``."""
