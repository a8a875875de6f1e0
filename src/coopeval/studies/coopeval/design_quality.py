"""The design-quality stage: NS and WD of every submitted mediator and contract (docs/protocol/design-checks.md#ns-wd).

CoopEval (arXiv 2604.15267) docs/protocol/mechanisms.md / Theorem 1 and docs/protocol/design-checks.md#ns-wd: every design a seated agent submitted
(one per seated agent per run) is checked against the base game, by brute force with tolerance
1e−9 (:mod:`coopeval.games.designs`):

* **NS**: everyone cooperating (contract) / everyone delegating to a mediator whose all-delegate
  action is the cooperative one (mediator) is a Nash equilibrium;
* **WD**: cooperating (contract) / delegating (mediator) is weakly dominant for every player.

:func:`design_quality_rows` gives one row per valid design (failed design decisions have no
design and are left out; :func:`design_quality_summary` reports how many there were), and
:func:`design_quality_summary` pools the rows per (source, mechanism, game, agent) across runs
and seats with the rates and binomial standard errors of docs/protocol/tables.md step 6.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from coopeval.core.schemas import SCHEMAS
from coopeval.games import Game, get_game
from coopeval.games.designs import design_checks

DESIGN_QUALITY_SCHEMA: dict[str, pl.DataType] = SCHEMAS["design_quality"]
"""Columns of the ``design_quality`` table (one row per valid submitted design)."""

DESIGN_QUALITY_SUMMARY_SCHEMA: dict[str, pl.DataType] = SCHEMAS["design_quality_summary"]
"""Columns of the ``design_quality_summary`` table (per agent and game)."""


def _frame(rows: list[dict[str, Any]], schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=dict(schema))
    return pl.DataFrame(rows, schema=dict(schema))


def design_quality_rows(
    designs: pl.DataFrame,
    game_params: Mapping[str, Mapping[str, Any]] | None = None,
) -> pl.DataFrame:
    """NS and WD of every valid design in a ``designs`` frame (docs/protocol/design-checks.md#ns-wd).

    Parameters
    ----------
    designs:
        Rows of the ``designs`` table (ours or imported), any number of cells.
    game_params:
        Optional game parameters per ``cell_id`` (a cell's ``game_params``); the game is
        otherwise built with its defaults from the ``game`` column (type name or key).

    Returns
    -------
    polars.DataFrame
        :data:`DESIGN_QUALITY_SCHEMA`; rows with status other than ``ok`` are skipped.

    Raises
    ------
    ValueError
        If a design marked ``ok`` cannot be evaluated (malformed JSON or keys), naming it.
    """
    params = game_params or {}
    cache: dict[tuple[str, str], Game] = {}
    rows: list[dict[str, Any]] = []
    if designs.height == 0:
        return _frame(rows, DESIGN_QUALITY_SCHEMA)
    for row in designs.iter_rows(named=True):
        if row.get("status") != "ok" or row.get("design") is None:
            continue
        cell_params = dict(params.get(row["cell_id"], {}) or {})
        key = (row["game"], repr(sorted(cell_params.items())))
        if key not in cache:
            cache[key] = get_game(row["game"], **cell_params)
        try:
            checks = design_checks(cache[key], row["design_kind"], row["design"])
        except ValueError as exc:
            raise ValueError(
                f"design of {row['designer']} in cell {row['cell_id']} ({row['game']}): {exc}"
            ) from None
        ids = {c: row.get(c) for c in DESIGN_QUALITY_SCHEMA if c not in ("ns", "wd")}
        rows.append({**ids, "ns": checks["NS"], "wd": checks["WD"]})
    return _frame(rows, DESIGN_QUALITY_SCHEMA)


def _se(p: float, n: int) -> float:
    return math.sqrt(p * (1.0 - p) / n) if n else float("nan")


def design_quality_summary(rows: pl.DataFrame, designs: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per (source, mechanism, game, agent, design kind): NS/WD counts, rates and s.e.

    Designs are pooled across runs and seats (docs/protocol/tables.md step 6: 6 per two-player game and 9 for
    Public Goods over three runs); rate = #designs meeting the criterion / #designs, s.e. the
    binomial √(p(1 − p)/n). With ``designs`` (the input of :func:`design_quality_rows`), failed
    design decisions are counted in ``n_failed`` (they are excluded from the rates).
    """
    keys = ["source", "mechanism", "game", "agent", "design_kind"]
    failed: dict[tuple[Any, ...], int] = {}
    runs: dict[tuple[Any, ...], set[Any]] = {}
    if designs is not None and designs.height:
        for r in designs.iter_rows(named=True):
            k = tuple(r.get(c) for c in keys)
            runs.setdefault(k, set()).add(r.get("run"))
            if r.get("status") != "ok" or r.get("design") is None:
                failed[k] = failed.get(k, 0) + 1
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows.iter_rows(named=True):
        k = tuple(r[c] for c in keys)
        groups.setdefault(k, []).append(r)
        runs.setdefault(k, set()).add(r["run"])
    out = []
    for k in sorted(set(groups) | set(failed), key=lambda t: tuple("" if v is None else str(v) for v in t)):
        members = groups.get(k, [])
        n = len(members)
        ns = sum(1 for m in members if m["ns"])
        wd = sum(1 for m in members if m["wd"])
        ns_rate = ns / n if n else float("nan")
        wd_rate = wd / n if n else float("nan")
        out.append(
            {
                **dict(zip(keys, k, strict=True)),
                "n_runs": len(runs.get(k, set())),
                "n_designs": n,
                "n_failed": failed.get(k, 0),
                "ns_count": ns,
                "wd_count": wd,
                "ns_rate": ns_rate,
                "wd_rate": wd_rate,
                "ns_se": _se(ns_rate, n) if n else float("nan"),
                "wd_se": _se(wd_rate, n) if n else float("nan"),
            }
        )
    return _frame(out, DESIGN_QUALITY_SUMMARY_SCHEMA)
