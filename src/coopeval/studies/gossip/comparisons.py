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

import duckdb
import polars as pl

from coopeval.comparison.multiplicity import DEFAULT_CORRECTION
from coopeval.comparison.paired import DEFAULT_SEED
from coopeval.comparison.populations import population_rows, select_and_compare
from coopeval.comparison.record import comparisons_frame
from coopeval.core.io import write_parquet_atomic
from coopeval.studies.gossip.records import TABLES

__all__ = ["GOSSIP_METRICS", "gossip_comparison_rows", "store_comparison", "write_gossip_comparisons"]

GOSSIP_METRICS = ("cooperation_ratio_mean", "discounted_return_mean", "gini", "utility_gap")
"""Compared columns of ``gossip_run_metrics`` (the first is the CLI's default)."""
SCOPE = ("testbed", "condition", "matching")


def gossip_comparison_rows(run_metrics: pl.DataFrame, correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """Every pair of models per (testbed, condition, matching) on :data:`GOSSIP_METRICS`."""
    return population_rows(run_metrics, study="gossip", scope_columns=SCOPE, population_column="model",
                           replicate_column="replicate", metrics=GOSSIP_METRICS, correction=correction, seed=seed)


def write_gossip_comparisons(paths: Sequence[str | Path], out: str | Path) -> pl.DataFrame:
    """Read the cells' ``gossip_run_metrics`` Parquet files, compare, write the rows as Parquet."""
    schema = TABLES["gossip_run_metrics"]
    frame = pl.concat([pl.read_parquet(p).select(list(schema)).cast(schema) for p in paths]) if paths else pl.DataFrame(schema=schema)
    rows = comparisons_frame(gossip_comparison_rows(frame))
    write_parquet_atomic(rows, out)
    return rows


def store_comparison(
    store: str | Path, a: str, b: str, *, metric: str = GOSSIP_METRICS[0], mechanism: str | None = None,
    game: str | None = None, correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The ``comparisons`` row of models ``a`` vs ``b`` from a store's ``gossip_run_metrics``.

    Raises
    ------
    coopeval.comparison.errors.UnknownNameError
        For an unknown model, metric, condition (``--mechanism``) or testbed (``--game``).
    ValueError
        If ``a`` and ``b`` are the same model (two models that share no replicate get a row
        with null numbers and a ``note``).
    """
    con = duckdb.connect(str(store), read_only=True)
    try:
        frame = con.sql("SELECT * FROM gossip_run_metrics").pl()
    finally:
        con.close()
    return select_and_compare(frame, a, b, metric, study="gossip",
                              filters={"testbed": ("--game", game), "condition": ("--mechanism", mechanism)},
                              scope_columns=SCOPE, population_column="model", replicate_column="replicate",
                              metrics=GOSSIP_METRICS, correction=correction, seed=seed)
