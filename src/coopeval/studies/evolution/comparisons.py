"""Evolution's paired comparisons: two models' populations under the same protocol and variant,
replicates paired by seed (:mod:`coopeval.comparison.populations`).

Headline metrics per run (one evolution cell): at the last generation of ``evo_generations``
the donation fraction (cooperation) and the mean final resources (Vallinder & Hughes, arXiv
2412.10270 §3); over the run's ``invasion_tests`` the share of tested strategies robust to the
free-rider (Horibe et al., arXiv 2608.04507; null without invasion tests). For
``coopeval compare --study evolution``, ``--mechanism`` selects the protocol and ``--game`` the
variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.comparison.multiplicity import DEFAULT_CORRECTION
from coopeval.comparison.paired import DEFAULT_SEED
from coopeval.comparison.populations import PopulationComparison
from coopeval.comparison.record import comparisons_frame
from coopeval.core.io import write_parquet_atomic
from coopeval.studies.evolution.records import TABLES

__all__ = ["COMPARISON", "EVOLUTION_METRICS", "evolution_comparison_rows", "run_metrics", "store_comparison", "write_evolution_comparisons"]

EVOLUTION_METRICS = ("donation_fraction", "mean_final", "robustness")
"""Compared per-run metrics (the first is the CLI's default)."""
_KEYS = ["cell_id", "run", "protocol", "model", "variant"]


def run_metrics(generations: pl.DataFrame, invasions: pl.DataFrame) -> pl.DataFrame:
    """One row per run: the last generation's ``donation_fraction`` and ``mean_final``, and
    ``robustness`` (share of robust invasion tests; null when the run has none)."""
    last = (generations.sort("generation").group_by(_KEYS, maintain_order=True).last()
            .select([*_KEYS, "donation_fraction", "mean_final"]))
    robust = invasions.group_by(_KEYS).agg(pl.col("robust").cast(pl.Float64).mean().alias("robustness"))
    return last.join(robust, on=_KEYS, how="left")


COMPARISON = PopulationComparison(
    study="evolution", scope_columns=("protocol", "variant"), replicate_column="run", metrics=EVOLUTION_METRICS,
    game_column="variant", mechanism_column="protocol", tables=("evo_generations", "invasion_tests"), runs=run_metrics,
)
"""Models compared per (protocol, variant), runs paired by seed; the store's runs are :func:`run_metrics`."""

store_comparison = COMPARISON.store_comparison
"""``coopeval compare --study evolution``: the row of models ``a`` vs ``b`` (``--mechanism`` = protocol, ``--game`` = variant)."""


def evolution_comparison_rows(runs: pl.DataFrame, correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """Every pair of models per (protocol, variant) on :data:`EVOLUTION_METRICS`."""
    return COMPARISON.rows(runs, correction, seed)


def _read(paths: Sequence[str | Path], table: str) -> pl.DataFrame:
    schema = TABLES[table]
    return pl.concat([pl.read_parquet(p).select(list(schema)).cast(schema) for p in paths]) if paths else pl.DataFrame(schema=schema)


def write_evolution_comparisons(generations: Sequence[str | Path], invasions: Sequence[str | Path], out: str | Path) -> pl.DataFrame:
    """Read the cells' ``evo_generations`` and ``invasion_tests`` Parquet files, compare, write."""
    rows = comparisons_frame(evolution_comparison_rows(run_metrics(_read(generations, "evo_generations"),
                                                                   _read(invasions, "invasion_tests"))))
    write_parquet_atomic(rows, out)
    return rows

