"""The CoopEval prompt sensitivity tables, figure and report page (docs/paraphrases.md), from
the cells' ``metrics`` files (:mod:`coopeval.studies.coopeval.analysis.prompt_sensitivity`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.evaluation.sensitivity import Sensitivity
from coopeval.evaluation.sensitivity_report import write_sensitivity_report
from coopeval.studies.coopeval.analysis.prompt_sensitivity import sensitivity_by_metric

__all__ = ["render_prompt_sensitivity"]

TITLE = "CoopEval prompt sensitivity: each agent's normalised metric under each wording"


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
    frames = [pl.read_parquet(f) for f in metrics_files]
    empty = pl.DataFrame(schema={"cell_id": pl.String, "agent": pl.String, "metric": pl.String, "value": pl.Float64})
    metrics = pl.concat(frames, how="diagonal_relaxed") if frames else empty
    results = sensitivity_by_metric(metrics, contexts)
    write_sensitivity_report(results, tables, figure_stem, page, formats, TITLE)
    return results
