"""The CoopEval leaderboard's rows over the games, and its per-game intervals: the result tables, read where the run wrote them.

The aggregate table (docs/protocol/tables.md; arXiv 2604.15267 §4) is the mean over the four
social dilemmas of each agent's run-averaged per-game value, Mean and Fitness normalised
(x − NE) / (coop − NE) (docs/protocol/games.md#normalisation), DR as the mean of the per-game DR ranks; its interval is the
percentile interval of the game-averaged bootstrap replicates, and its letters are the tie
groups of the normalised comparisons (docs/comparisons.md). The workflow writes it after the
store (``results/tables/aggregate.csv``; ``coopeval reproduce`` beside its store), so the
explorer reads it from there rather than recomputing the bootstrap. A table older than the
store belongs to another run and is not used. The per-game table (``per_game.csv``) gives the
per-game rows of a single replicate, which have no spread over cells, the interval of its
bootstrap over runs and match-ups (stratified; docs/protocol/tables.md).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

__all__ = ["AGGREGATE_LABEL", "RAW_LABEL", "aggregate_path", "read_aggregate", "read_result_table"]

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


def read_result_table(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(mechanism, game, agent) → ``{"<key>": value, "<key>_lo", "<key>_hi", "<key>_se",
    "<key>_group"}`` for the board's metrics (``mean``, ``fitness``, ``dr_rank``) of the result table
    (per-game or aggregate, whose game is ``All``) at ``path``; a metric the table lacks for that
    agent is absent. A per-game table that holds a game at several numbers of players N (column
    ``players``) lists the default cells' N first; only those rows are read (the board shows the
    other N's cells as ``<mechanism> (<variant>)``)."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    first_n: dict[tuple[str, str], str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            key = METRICS.get(r["metric"])
            n = r.get("players") or ""
            if key is None or first_n.setdefault((r["mechanism"], r["game"]), n) != n:
                continue
            row = out.setdefault((r["mechanism"], r["game"], r["agent"]), {})
            row[key] = _number(r["mean"])
            row[f"{key}_se"] = _number(r.get("se"))
            row[f"{key}_lo"] = _number(r.get("ci_low"))
            row[f"{key}_hi"] = _number(r.get("ci_high"))
            row[f"{key}_group"] = r.get("tie_group") or None
    return out


def read_aggregate(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(mechanism, agent) → the aggregate table's row (:func:`read_result_table`, game ``All``)."""
    return {(mechanism, agent): row for (mechanism, game, agent), row in read_result_table(path).items() if game == "All"}
