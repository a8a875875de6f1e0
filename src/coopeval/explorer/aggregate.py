"""The CoopEval leaderboard's rows over the games, and its per-game intervals: the result tables, read where the run wrote them.

The aggregate table (docs/protocol/tables.md; arXiv 2604.15267 §4) is the mean over the four
social dilemmas of each agent's run-averaged per-game value, Mean and Fitness normalised
(x − NE) / (coop − NE) (docs/protocol/games.md#normalisation), DR as the mean of the per-game DR ranks; its interval is the
percentile interval of the game-averaged bootstrap replicates, and its letters are the tie
groups of the normalised comparisons (docs/comparisons.md). The workflow writes it after the
store (``results/tables/aggregate.csv``; ``coopeval reproduce`` beside its store), so the
explorer reads it from there rather than recomputing the bootstrap. The tables are matched to
their store by content, not by file times (a store copied with ``cp -r`` keeps its tables): the
per-game table's Mean of every mechanism, game and agent it shares with the store must equal
the store's mean over the default cells (:func:`result_tables`); tables that differ belong to
another run and are not used, and the build and the page say why in one line. The per-game
table (``per_game.csv``) gives the per-game rows of a single replicate, which have no spread
over cells, the interval of its bootstrap over runs and match-ups (stratified;
docs/protocol/tables.md).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import duckdb

__all__ = ["AGGREGATE_LABEL", "RAW_LABEL", "aggregate_path", "read_aggregate", "read_result_table", "result_tables"]

AGGREGATE_LABEL = "social dilemmas (normalised)"
"""The game column of the rows taken from the aggregate table."""

RAW_LABEL = "all games (raw points)"
"""The game column of the rows averaged here when the aggregate table has no row for them."""

METRICS = {"Mean": "mean", "Fitness": "fitness", "DR": "dr_rank"}
"""The result tables' metric → the board's metric key (the tables' DR is a rank: the board's DR rank; DR_exact is not on the board)."""


def aggregate_path(store: Path, name: str = "aggregate.csv") -> Path | None:
    """The result table ``name`` of ``store``'s run: ``tables/<name>`` beside the store (the
    workflow's) or ``<name>`` beside it (``coopeval reproduce``), when it is not older than the
    store; else None."""
    for candidate in (store.parent / "tables" / name, store.parent / name):
        if candidate.is_file() and candidate.stat().st_mtime >= store.stat().st_mtime:
            return candidate
    return None


def _number(text: str | None) -> float | None:
    if text is None or text == "":
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def read_result_table(path: Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """(mechanism, game, agent) → ``{"<key>": value, "<key>_lo", "<key>_hi", "<key>_se",
    "<key>_group"}`` for the board's metrics (``mean``, ``fitness``, ``dr_rank``) of the result table
    (per-game or aggregate, whose game is ``All``) at ``path``; a metric the table lacks for that
    agent is absent. A per-game table that holds a game at several numbers of players N (column
    ``players``) lists the default cells' N first; only those rows are read (the board shows the
    other N's cells as ``<mechanism> (<variant>)``); every row with an N is also under
    (mechanism, game, agent, N), where the board finds a variant's intervals."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    first_n: dict[tuple[str, str], str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            key = METRICS.get(r["metric"])
            n = r.get("players") or ""
            if key is None:
                continue
            keys: list[tuple[str, ...]] = [(r["mechanism"], r["game"], r["agent"], n)] if n else []
            if first_n.setdefault((r["mechanism"], r["game"]), n) == n:
                keys.append((r["mechanism"], r["game"], r["agent"]))
            for table_key in keys:
                _fill(out.setdefault(table_key, {}), key, r)
    return out


def _fill(row: dict[str, Any], key: str, r: dict[str, str]) -> None:
    """Put one table row's value, s.e., interval and letters of the board metric ``key`` in ``row``."""
    row[key] = _number(r["mean"])
    row[f"{key}_se"] = _number(r.get("se"))
    row[f"{key}_lo"] = _number(r.get("ci_low"))
    row[f"{key}_hi"] = _number(r.get("ci_high"))
    row[f"{key}_group"] = r.get("tie_group") or None


def read_aggregate(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(mechanism, agent) → the aggregate table's row (:func:`read_result_table`, game ``All``)."""
    return {(key[0], key[2]): row for key, row in read_result_table(path).items() if len(key) == 3 and key[1] == "All"}


MATCH_TOLERANCE = 1e-9
"""Relative tolerance of the content match of a result table and its store (the table's CSV
rounds nothing: the same floats, up to the order of summation)."""


def _found(store: Path, name: str) -> Path | None:
    for candidate in (store.parent / "tables" / name, store.parent / name):
        if candidate.is_file():
            return candidate
    return None


def _store_means(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[tuple[str, str, str], float]:
    """(mechanism, game, agent) → the store's Mean over its default cells (our runs)."""
    from coopeval.explorer.queries import columns

    join, default = "", ""
    if "cells" in tables and "variant" in columns(con, "cells"):
        join = "LEFT JOIN (SELECT cell_id, any_value(variant) AS variant FROM cells GROUP BY cell_id) c USING (cell_id)"
        default = " AND coalesce(c.variant, 'default') = 'default'"
    found = con.execute(f"SELECT m.mechanism, m.game, m.agent, avg(m.value) FROM metrics m {join} WHERE m.metric = 'Mean'"
                        f" AND coalesce(m.source, 'ours') = 'ours' AND isfinite(m.value){default} GROUP BY ALL").fetchall()  # fmt: skip
    return {(str(m), str(g), str(a)): float(v) for m, g, a, v in found}


def result_tables(
    store: Path, con: duckdb.DuckDBPyConnection, tables: set[str]
) -> tuple[dict[tuple[str, str], dict[str, Any]] | None, dict[tuple[str, ...], dict[str, Any]] | None, str | None]:
    """The aggregate and per-game result tables of ``store``'s run, matched by content:
    ``(aggregate, per_game, why_not)``.

    The per-game table (``tables/per_game.csv`` beside the store, or ``per_game.csv`` beside it)
    is the run's when each Mean it shares with the store (mechanism, game, agent) equals the
    store's mean over the default cells, and it shares at least one; the aggregate table in the
    same folder is then used too. Tables that do not match are not used and ``why_not`` says so
    in one line (None when they match or there are none). An aggregate table without a per-game
    table beside it is used when it is not older than the store (nothing to match it against).
    """
    per_game_path, aggregate_found = _found(store, "per_game.csv"), _found(store, "aggregate.csv")
    if per_game_path is None:
        legacy = aggregate_path(store)
        return (read_aggregate(legacy) if legacy is not None else None), None, None
    per_game = read_result_table(per_game_path)
    means = _store_means(con, tables)
    shared = [(key, row["mean"]) for key, row in per_game.items() if row.get("mean") is not None and key in means]
    where = per_game_path.relative_to(store.parent) if per_game_path.is_relative_to(store.parent) else per_game_path
    if not shared and means:
        return None, None, f"{where} holds none of the store's mechanism × game × agent Means: it belongs to another run, so it is not used"
    for key, value in shared:
        if not math.isclose(value, means[key], rel_tol=MATCH_TOLERANCE, abs_tol=1e-12):
            mechanism, game, agent = key
            return None, None, (f"{where} is stale: its Mean of {agent} under {mechanism} on {game} is {value:.6g}, the store's"
                                f" {means[key]:.6g}; rebuild the tables (snakemake tables) to use them")  # fmt: skip
    aggregate = None
    if aggregate_found is not None and aggregate_found.parent == per_game_path.parent:
        aggregate = read_aggregate(aggregate_found)
    return aggregate, per_game, None
