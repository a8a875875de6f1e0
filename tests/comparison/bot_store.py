"""Small CoopEval stores played by scripted bots, for the comparison tests."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import duckdb
import polars as pl

from coopeval.core.schemas import conform
from coopeval.studies.coopeval.parse import matchup_scores
from coopeval.studies.coopeval.tables.metrics import compute_metrics
from tests.helpers import play_study_cell, study_cells

ROSTER = ("always-cooperate", "tit-for-tat", "always-defect", "uniform-random")


@cache
def bot_scores(
    mechanisms: tuple[str, ...] = ("NoMechanism", "Repetition"),
    games: tuple[str, ...] = ("prisoners_dilemma", "stag_hunt"),
    roster: tuple[str, ...] = ROSTER,
    replicates: int = 2,
) -> pl.DataFrame:
    """The ``scores`` table of every cell of a bot config (played once per process)."""
    config = {"agents": [{"model": f"bot/{b}"} for b in roster], "games": list(games), "mechanisms": list(mechanisms),
              "replicates": replicates, "seed": 7, "mechanism_params": {"Repetition": {"num_rounds": 3}}}
    frames = []
    for spec in study_cells("coopeval", config):
        tables, _ = play_study_cell("coopeval", spec)
        frames.append(matchup_scores(tables["decisions"], tables["matchups"]))
    return conform("scores", pl.concat(frames, how="diagonal_relaxed"))


@cache
def bot_metrics() -> pl.DataFrame:
    """The ``metrics`` table of :func:`bot_scores` with its defaults (computed once per process)."""
    return compute_metrics(bot_scores())


def write_store(path: Path, scores: pl.DataFrame, extra: dict[str, pl.DataFrame] | None = None) -> Path:
    """A DuckDB store with ``cells`` (all default variant), ``scores`` and their ``metrics``."""
    ids = scores["cell_id"].unique().to_list()
    tables = {"cells": pl.DataFrame({"cell_id": ids, "variant": ["default"] * len(ids)}), "scores": scores,
              "metrics": bot_metrics() if scores is bot_scores() else compute_metrics(scores), **(extra or {})}
    return write_tables(path, tables)


def write_tables(path: Path, tables: dict[str, pl.DataFrame]) -> Path:
    """A DuckDB store at ``path`` holding each frame of ``tables`` as the table of its name."""
    con = duckdb.connect(str(path))
    for name, frame in tables.items():
        con.register("source", frame.to_arrow())
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM source")
        con.unregister("source")
    con.close()
    return path


def table_mean(metrics: pl.DataFrame, agent: str, mechanism: str | None, game: str | None, cells: Sequence[str]) -> float:
    """Mean over the selected cells of the ``metrics`` table's Mean of ``agent``."""
    rows = metrics.filter((pl.col("metric") == "Mean") & (pl.col("agent") == agent) & pl.col("cell_id").is_in(list(cells)))
    if mechanism:
        rows = rows.filter(pl.col("mechanism") == mechanism)
    if game:
        rows = rows.filter(pl.col("game") == game)
    return float(rows["value"].mean())  # type: ignore[arg-type]
