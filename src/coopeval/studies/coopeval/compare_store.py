"""``coopeval compare --study coopeval``: one paired comparison read from a store.

Reads the default-variant ``scores`` and ``metrics`` of the store (like the tables), selects a
mechanism and/or game, compares every pair of agents of the selection on the metric (the
correction's family), and returns the row of the requested pair
(:mod:`coopeval.studies.coopeval.comparisons`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from coopeval.comparison.errors import UnknownNameError
from coopeval.comparison.multiplicity import DEFAULT_CORRECTION
from coopeval.comparison.paired import DEFAULT_SEED
from coopeval.comparison.record import comparison_row, corrected, swapped
from coopeval.games import TYPE_NAMES
from coopeval.studies.coopeval.comparisons import (
    METRICS,
    Cells,
    compare_fitness,
    compare_mean,
    fitness_replicates,
    pairs_in,
    scope_name,
    select_cells,
)
from coopeval.studies.coopeval.tables.metrics import observations_by_cell

__all__ = ["store_comparison"]


def _read(store: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        default = "cell_id IN (SELECT cell_id FROM cells WHERE variant = 'default')"
        scores = con.sql(f"SELECT * FROM scores WHERE {default}").pl()
        metrics = con.sql(f"SELECT * FROM metrics WHERE {default}").pl()
    finally:
        con.close()
    return scores, metrics


def _choose(field: str, value: str | None, present: set[str], aliases: dict[str, str] | None = None) -> str | None:
    if value is None:
        return None
    resolved = (aliases or {}).get(value, value)
    if resolved not in present:
        raise UnknownNameError(field, value, present)
    return resolved


def store_comparison(
    store: str | Path, a: str, b: str, *, metric: str = "Mean", mechanism: str | None = None, game: str | None = None,
    correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The ``comparisons`` row of A vs B on ``metric`` over the selected cells of a store.

    ``game`` accepts the config key (``prisoners_dilemma``) or the type name; None pools every
    game (raw points), None ``mechanism`` every mechanism. The p-value is adjusted over every
    pair of agents of the same selection and metric.

    Raises
    ------
    UnknownNameError
        For an agent, metric, mechanism or game not in the store (listing the valid names).
    ValueError
        If A and B are the same agent, never share a cell, or (Fitness) have no Fitness.
    """
    if metric not in METRICS:
        raise UnknownNameError("--metric", metric, METRICS)
    scores, metrics = _read(store)
    cells: Cells = observations_by_cell(scores)
    mechanism = _choose("--mechanism", mechanism, {k[3] for k in cells})
    game = _choose("--game", game, {k[4] for k in cells}, {key: name for name, key in TYPE_NAMES.items()})
    selected = select_cells(cells, mechanism, game)
    agents = {name for obs in selected.values() for seats, _ in obs for name in seats}
    _choose("--a", a, agents)
    _choose("--b", b, agents)
    if a == b:
        raise ValueError(f"--a and --b: both are {a!r}; compare two different agents")
    scope = scope_name(mechanism, game)
    reps = fitness_replicates(selected, seed=seed) if metric == "Fitness" else None
    rows = []
    for x, y in pairs_in(selected):
        if metric == "Mean":
            estimate = compare_mean(selected, x, y, seed=seed)
        else:
            estimate = compare_fitness(selected, metrics, x, y, replicates=reps)
        rows.append(comparison_row("coopeval", scope, metric, x, y, estimate))
    for row in corrected(rows, correction):
        if (row["a"], row["b"]) == (a, b):
            return row
        if (row["a"], row["b"]) == (b, a):
            return swapped(row)
    raise ValueError(f"agents {a!r} and {b!r} never sit in the same cell of the selection {scope}")
