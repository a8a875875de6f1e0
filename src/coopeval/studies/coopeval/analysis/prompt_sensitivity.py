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
from coopeval.evaluation.sensitivity_report import SensitivitySource
from coopeval.games import get_game
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE

__all__ = [
    "SENSITIVITY",
    "SENSITIVITY_METRICS",
    "cell_contexts",
    "read_metrics",
    "sensitivity_values",
]

SENSITIVITY_METRICS = ("Mean", "Fitness")
"""The metrics compared across wordings (normalised per game)."""

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


def read_metrics(files: Sequence[str | Path]) -> pl.DataFrame:
    """The cells' ``metrics`` files as one frame (an empty frame with their columns for none)."""
    frames = [pl.read_parquet(f) for f in files]
    empty = pl.DataFrame(schema={"cell_id": pl.String, "agent": pl.String, "metric": pl.String, "value": pl.Float64})
    return pl.concat(frames, how="diagonal_relaxed") if frames else empty


SENSITIVITY = SensitivitySource(
    "prompt_sensitivity", "CoopEval prompt sensitivity: each agent's normalised metric under each wording",
    SENSITIVITY_METRICS, read_metrics, sensitivity_values,
)
"""CoopEval's report (rule ``prompt_sensitivity``, :func:`~coopeval.evaluation.sensitivity_report.render_sensitivity_report`):
``results/tables/prompt_sensitivity*``, ``results/figures/prompt_sensitivity.<format>``,
``results/report/prompt_sensitivity.html``."""
