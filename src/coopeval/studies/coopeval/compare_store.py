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

from coopeval.comparison.errors import UnknownNameError, metric_name
from coopeval.comparison.multiplicity import DEFAULT_CORRECTION
from coopeval.comparison.paired import DEFAULT_SEED, PairedEstimate, no_shared_data
from coopeval.comparison.record import comparison_row, corrected, swapped
from coopeval.evaluation.deviation import canonical_rule
from coopeval.games import TYPE_NAMES
from coopeval.studies.coopeval.comparisons import (
    METRICS,
    Cells,
    compare_dr,
    compare_fitness,
    compare_mean,
    dr_replicates,
    fitness_replicates,
    pairs_in,
    replicates_of,
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
    correction: str = DEFAULT_CORRECTION, seed: int = DEFAULT_SEED, dr_rule: str = "strictest",
) -> dict[str, Any]:
    """The ``comparisons`` row of A vs B on ``metric`` over the selected cells of a store.

    ``game`` accepts the config key (``prisoners_dilemma``) or the type name; None pools every
    game (raw points), None ``mechanism`` every mechanism. ``dr_rule`` is the deviation-rating
    rule of ``metric="DR"``. The p-value is adjusted over every pair of agents of the same
    selection and metric. A pair with nothing to compare (one of the two plays no cell of the
    selection, they never sit in the same cell, or they have no ``metric`` there) gets a row
    whose numbers are None and whose ``note`` says why.

    Raises
    ------
    UnknownNameError
        For an agent, metric, mechanism, game or DR rule not in the store (listing the valid
        names).
    ValueError
        If A and B are the same agent or ``dr_rule`` is unknown.
    """
    metric = metric_name(metric, METRICS)
    rule = canonical_rule(dr_rule)
    scores, metrics = _read(store)
    if metric == "DR":
        _choose("--dr-rule", rule, set(metrics.filter(pl.col("metric") == "DR_rank")["rule"].drop_nulls().to_list()))
    cells: Cells = observations_by_cell(scores)
    mechanism = _choose("--mechanism", mechanism, {k[3] for k in cells})
    game = _choose("--game", game, {k[4] for k in cells}, {key: name for name, key in TYPE_NAMES.items()})
    _choose("--a", a, _agents(cells))
    _choose("--b", b, _agents(cells))
    if a == b:
        raise ValueError(f"--a and --b: both are {a!r}; compare two different agents")
    selected = select_cells(cells, mechanism, game)
    scope = scope_name(mechanism, game)
    pairs = pairs_in(selected)
    if (a, b) not in pairs and (b, a) not in pairs:
        absent = [name for name in (a, b) if name not in _agents(selected)]
        reason = (f"{' and '.join(absent)} play{'s' if len(absent) == 1 else ''} no cell of the selection {scope}" if absent
                  else f"{a} and {b} never sit in the same cell of the selection {scope}")
        return corrected([comparison_row("coopeval", scope, metric, a, b, no_shared_data(f"no shared data: {reason}"))],
                         correction)[0]
    reps = (fitness_replicates(selected, seed=seed) if metric == "Fitness"
            else dr_replicates(selected, rule=rule, seed=seed) if metric == "DR" else None)
    rows = [comparison_row("coopeval", scope, metric, x, y, _compare(selected, metrics, x, y, metric, rule, seed, reps),
                           replicates=replicates_of(selected, x, y))
            for x, y in pairs]
    row = next(r for r in corrected(rows, correction) if {r["a"], r["b"]} == {a, b})
    row = row if row["a"] == a else swapped(row)
    coverage = _coverage_note(selected, a, b)
    if coverage is not None:
        row["note"] = coverage if row["note"] is None else f"{coverage}; {row['note']}"
    return row


def _coverage_note(cells: Cells, a: str, b: str) -> str | None:
    """Why Δ pools fewer (mechanism, game) groups than the selection holds (an agent that plays
    only some mechanisms, e.g. a roster entry restricted by ``mechanisms``), or None."""
    groups = {(k[3], k[4]) for k in cells}
    both = {(k[3], k[4]) for k, obs in cells.items() if any(a in seats and b in seats for seats, _ in obs)}
    if both == groups:
        return None
    mechanisms = ", ".join(sorted({m for m, _ in both}))
    return (f"pooled over the {len(both)} of {len(groups)} mechanism × game groups of the selection where both play"
            f" (mechanisms: {mechanisms}); pass --mechanism and --game to compare within one group")


def _agents(cells: Cells) -> set[str]:
    return {name for obs in cells.values() for seats, _ in obs for name in seats}


def _compare(
    cells: Cells, metrics: pl.DataFrame, a: str, b: str, metric: str, rule: str, seed: int, replicates: Any
) -> PairedEstimate:
    """One pair's estimate; a pair with no value of both under ``metric`` gets a null one."""
    if metric == "Mean":
        return compare_mean(cells, a, b, seed=seed)
    try:
        if metric == "Fitness":
            return compare_fitness(cells, metrics, a, b, replicates=replicates)
        return compare_dr(cells, metrics, a, b, rule=rule, replicates=replicates)
    except ValueError as exc:
        return no_shared_data(f"no shared data: {exc}")
