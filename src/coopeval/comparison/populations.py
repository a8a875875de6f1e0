"""Paired comparisons of two populations across replicates paired by seed (gossip, evolution).

A study gives one row per (scope …, population, replicate) with its headline metrics (e.g. a
gossip run's cooperation ratio, an evolution run's final resources). Two populations are
compared on the replicates both have (same scope, same replicate: same schedule and seeds):
with K such clusters and per-replicate values v_A(k), v_B(k),

    Δ = (1/K) Σ_k (v_A(k) − v_B(k)),

the difference of the two populations' means over those replicates, with the contributions
a_k = v_A(k)/K, b_k = v_B(k)/K passed to :func:`coopeval.comparison.paired.paired_cluster_test`
(bootstrap over replicates, sign-flip permutation p-value, MDE). Replicates where either value
is missing or not finite (e.g. a Gini of a run with mean return ≤ 0) are left out.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from coopeval.comparison.errors import UnknownNameError, metric_name
from coopeval.comparison.multiplicity import DEFAULT_CORRECTION
from coopeval.comparison.paired import (
    DEFAULT_SEED,
    PairedEstimate,
    no_shared_data,
    paired_cluster_test,
)
from coopeval.comparison.record import comparison_row, corrected, swapped

__all__ = ["REPLICATE_CLUSTERS", "PopulationComparison", "compare_populations", "population_rows", "select_and_compare"]

REPLICATE_CLUSTERS = "replicates paired by seed"


def _values(frame: pl.DataFrame, population_column: str, name: str, metric: str, cluster_columns: Sequence[str]) -> dict[tuple[Any, ...], float]:
    rows = frame.filter(pl.col(population_column) == name).select([*cluster_columns, metric])
    out: dict[tuple[Any, ...], float] = {}
    for row in rows.iter_rows():
        value = row[-1]
        if value is not None and math.isfinite(float(value)):
            out[tuple(row[:-1])] = float(value)
    return out


def compare_populations(
    frame: pl.DataFrame, a: str, b: str, metric: str, *, population_column: str, cluster_columns: Sequence[str],
    seed: int = DEFAULT_SEED,
) -> PairedEstimate | None:
    """Paired comparison of ``metric`` between populations ``a`` and ``b`` over their common
    clusters (distinct values of ``cluster_columns``, e.g. scope columns and the replicate).

    Returns
    -------
    PairedEstimate or None
        None when no cluster has a finite value of both.
    """
    va = _values(frame, population_column, a, metric, cluster_columns)
    vb = _values(frame, population_column, b, metric, cluster_columns)
    common = sorted(set(va) & set(vb), key=str)
    if not common:
        return None
    k = len(common)
    return paired_cluster_test([va[c] / k for c in common], [vb[c] / k for c in common], n_pairs=k,
                               clusters=REPLICATE_CLUSTERS, seed=seed)


def population_rows(
    frame: pl.DataFrame, *, study: str, scope_columns: Sequence[str], population_column: str, replicate_column: str,
    metrics: Sequence[str], correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED,
) -> list[dict[str, Any]]:
    """Every pair of populations on every metric within each scope (scope = ``scope_columns``
    joined by ``/``), corrected per (scope, metric); rows of the ``comparisons`` table."""
    rows: list[dict[str, Any]] = []
    if not frame.height:
        return rows
    for scope_key, part in frame.group_by(list(scope_columns), maintain_order=True):
        scope = "/".join(str(v) for v in scope_key)
        populations = sorted(set(part[population_column].drop_nulls().to_list()))
        for metric in metrics:
            for a, b in itertools.combinations(populations, 2):
                estimate = compare_populations(part, a, b, metric, population_column=population_column,
                                               cluster_columns=[replicate_column], seed=seed)
                if estimate is not None:  # a cluster is one replicate of this scope
                    rows.append(comparison_row(study, scope, metric, a, b, estimate, replicates=estimate.n_clusters))
    return corrected(rows, correction)


def select_and_compare(
    frame: pl.DataFrame, a: str, b: str, metric: str, *, study: str, filters: Mapping[str, tuple[str, str | None]],
    scope_columns: Sequence[str], population_column: str, replicate_column: str, metrics: Sequence[str],
    correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The ``comparisons`` row of ``a`` vs ``b`` after filtering ``frame`` (the CLI's path).

    ``filters`` maps a column to (option name, value or None). Clusters are (scope columns,
    replicate): a selection spanning several scopes pools their replicates. The p-value is
    adjusted over every pair of populations of the selection on ``metric``.

    A pair with nothing to compare (one of the two has no run in the selection, or they share
    no replicate with a finite value) gets a row whose numbers are None and whose ``note`` says
    why.

    Raises
    ------
    UnknownNameError
        For an unknown metric, filter value or population (listing the valid names).
    ValueError
        If ``a`` equals ``b``.
    """
    metric = metric_name(metric, metrics)
    every = sorted(set(frame[population_column].drop_nulls().to_list()))
    for option, name in (("--a", a), ("--b", b)):
        if name not in every:
            raise UnknownNameError(option, name, every)
    if a == b:
        raise ValueError(f"--a and --b: both are {a!r}; compare two different populations")
    for column, (option, value) in filters.items():
        if value is not None:
            present = set(frame[column].drop_nulls().cast(pl.String).to_list())
            if value not in present:
                raise UnknownNameError(option, value, present)
            frame = frame.filter(pl.col(column).cast(pl.String) == value)
    populations = sorted(set(frame[population_column].drop_nulls().to_list()))
    scope = "/".join(value or "*" for _, value in filters.values())
    clusters = [*scope_columns, replicate_column]
    rows = []
    for x, y in itertools.combinations(populations, 2):
        estimate = compare_populations(frame, x, y, metric, population_column=population_column, cluster_columns=clusters, seed=seed)
        if estimate is not None:
            replicates = frame.filter(pl.col(population_column).is_in([x, y]))[replicate_column].n_unique()
            rows.append(comparison_row(study, scope, metric, x, y, estimate, replicates=replicates))
    for row in corrected(rows, correction):
        if (row["a"], row["b"]) in ((a, b), (b, a)):
            return row if row["a"] == a else swapped(row)
    absent = [name for name in (a, b) if name not in populations]
    reason = (f"{' and '.join(absent)} ha{'s' if len(absent) == 1 else 've'} no run in the selection {scope}" if absent
              else f"{a} and {b} share no replicate with a finite {metric} in the selection {scope}")
    return corrected([comparison_row(study, scope, metric, a, b, no_shared_data(f"no shared data: {reason}"))], correction)[0]


def _single_table(frame: pl.DataFrame) -> pl.DataFrame:
    return frame


@dataclass(frozen=True)
class PopulationComparison:
    """How a study compares its model populations (gossip, evolution), declared once: the
    workflow's rows (:meth:`rows`) and ``coopeval compare --study <study>``
    (:meth:`store_comparison`). Creating one raises ValueError if ``game_column`` or
    ``mechanism_column`` is not one of ``scope_columns``."""

    study: str
    """The ``comparisons.study`` value."""
    scope_columns: tuple[str, ...]
    """Columns of one scope (compared separately); the CLI's filters apply in this order, so
    the row's ``scope`` names the selected values in it."""
    replicate_column: str
    """The replicate column (replicates paired by seed)."""
    metrics: tuple[str, ...]
    """Compared metric columns; the first is the CLI's default ``--metric``."""
    game_column: str
    """The scope column ``coopeval compare --game`` selects."""
    mechanism_column: str
    """The scope column ``coopeval compare --mechanism`` selects."""
    tables: tuple[str, ...]
    """Store tables read by :meth:`store_comparison`, in the order :attr:`runs` takes them."""
    runs: Callable[..., pl.DataFrame] = _single_table
    """The per-run frame (one row per scope, population and replicate with the metric columns)
    from the :attr:`tables` frames; default: the one table as it is."""
    population_column: str = "model"
    """The population column (the model)."""

    def __post_init__(self) -> None:
        for field, column in (("game_column", self.game_column), ("mechanism_column", self.mechanism_column)):
            if column not in self.scope_columns:
                raise ValueError(f"{field}: {column!r} is not a scope column {list(self.scope_columns)}; name one of them")

    def rows(self, runs: pl.DataFrame, correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
        """Every pair of populations per scope on every metric (:func:`population_rows`)."""
        return population_rows(runs, study=self.study, scope_columns=self.scope_columns, population_column=self.population_column,
                               replicate_column=self.replicate_column, metrics=self.metrics, correction=correction, seed=seed)

    def store_comparison(
        self, store: str | Path, a: str, b: str, *, metric: str | None = None, mechanism: str | None = None,
        game: str | None = None, correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED,
    ) -> dict[str, Any]:
        """The ``comparisons`` row of models ``a`` vs ``b`` from a DuckDB store's :attr:`tables`
        (``coopeval compare --study <study>``; :func:`select_and_compare`). ``metric`` None is
        the first of :attr:`metrics`; ``mechanism`` / ``game`` select a value of
        :attr:`mechanism_column` / :attr:`game_column`.

        Raises
        ------
        coopeval.comparison.errors.UnknownNameError
            For an unknown model, metric, ``--mechanism`` or ``--game`` value.
        ValueError
            If ``a`` and ``b`` are the same model (two models that share no replicate get a
            row with null numbers and a ``note``).
        duckdb.Error
            If the store cannot be read or lacks one of :attr:`tables`.
        """
        con = duckdb.connect(str(store), read_only=True)
        try:
            runs = self.runs(*(con.sql(f"SELECT * FROM {table}").pl() for table in self.tables))
        finally:
            con.close()
        options = {self.game_column: ("--game", game), self.mechanism_column: ("--mechanism", mechanism)}
        return select_and_compare(runs, a, b, self.metrics[0] if metric is None else metric, study=self.study,
                                  filters={column: options[column] for column in self.scope_columns if column in options},
                                  scope_columns=self.scope_columns, population_column=self.population_column,
                                  replicate_column=self.replicate_column, metrics=self.metrics, correction=correction, seed=seed)
