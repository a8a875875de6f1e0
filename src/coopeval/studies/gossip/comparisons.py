"""Gossip's paired comparisons: two model populations on the same testbed, condition and
matching, replicates paired by seed (same schedule; :mod:`coopeval.comparison.populations`).

Headline metrics (columns of ``gossip_run_metrics``, one row per run): the mean cooperation
ratio and discounted return G over the run's agents, the run's Gini of G (ALIGN, arXiv
2602.07777 §4), and under attack the utility gap honest − attacker (robustness; null without
attackers, so those runs are left out). For ``coopeval compare --study gossip``, ``--mechanism``
selects the condition and ``--game`` the testbed (as in the shared ``decisions`` table).
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
from coopeval.core.schemas import conform
from coopeval.studies.gossip.records import TABLES

__all__ = ["COMPARISON", "GOSSIP_METRICS", "gossip_comparison_rows", "store_comparison", "write_gossip_comparisons"]

GOSSIP_METRICS = ("cooperation_ratio_mean", "discounted_return_mean", "gini", "utility_gap")
"""Compared columns of ``gossip_run_metrics`` (the first is the CLI's default)."""
SCOPE = ("testbed", "condition", "matching")


def gossip_comparison_rows(run_metrics: pl.DataFrame, correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """Every pair of models per (testbed, condition, matching) on :data:`GOSSIP_METRICS`."""
    return COMPARISON.rows(run_metrics, correction, seed)


def write_gossip_comparisons(paths: Sequence[str | Path], out: str | Path) -> pl.DataFrame:
    """Read the cells' ``gossip_run_metrics`` Parquet files, compare, write the rows as Parquet.
    A file written before a column existed (the failed-round counts of issue 36) reads it as null."""
    schema = TABLES["gossip_run_metrics"]
    frame = pl.concat([conform("gossip_run_metrics", pl.read_parquet(p)) for p in paths]) if paths else pl.DataFrame(schema=schema)
    rows = comparisons_frame(gossip_comparison_rows(frame))
    write_parquet_atomic(rows, out)
    return rows


COMPARISON = PopulationComparison(study="gossip", scope_columns=SCOPE, replicate_column="replicate", metrics=GOSSIP_METRICS,
                                  game_column="testbed", mechanism_column="condition", tables=("gossip_run_metrics",))
"""Models compared per (testbed, condition, matching), replicates paired by seed."""

store_comparison = COMPARISON.store_comparison
"""``coopeval compare --study gossip``: the row of models ``a`` vs ``b`` (``--mechanism`` = condition, ``--game`` = testbed)."""
