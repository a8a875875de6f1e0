"""The tables of a store use the configured replicator settings for the Fitness intervals
(issue 20: the ``tables`` rule used to drop ``evaluation.steps`` / ``lr``)."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from coopeval.core.schemas import conform
from coopeval.studies.coopeval.tables.builder import csv_schema
from coopeval.studies.coopeval.tables.defaults import (
    DEFAULT_RESAMPLES,
    REPLICATOR_LR,
    REPLICATOR_STEPS,
    schema_default,
)
from coopeval.studies.coopeval.tables.from_store import tables_from_store
from coopeval.studies.coopeval.tables.metrics import compute_metrics

A, B = "x/a(CoT)", "x/b(IO)"
LLM = "LLM Average"
# One run of a Prisoner's Dilemma (A cooperates, B defects). Mirrored matchups carry mirrored
# scores, so every bootstrap resample (runs, then matchups within strata of equal agent
# multisets) rebuilds the same payoff tensor: the Fitness interval collapses onto the point
# value of the replicator run, whatever the draws.
PD = np.array([[2.0, 0.0], [3.0, 1.0]])  # row agent's payoff against the column agent
RUN = {(A, A): (2.0, 2.0), (A, B): (0.0, 3.0), (B, A): (3.0, 0.0), (B, B): (1.0, 1.0)}


def _scores() -> pl.DataFrame:
    data = []
    for k, ((p1, p2), (s1, s2)) in enumerate(RUN.items()):
        for seat, agent, score in ((1, p1, s1), (2, p2, s2)):
            data.append({"cell_id": "r1/nm", "source": "ours", "run": "r1", "mechanism": "NoMechanism",
                         "game": "PrisonersDilemma", "matchup_id": f"m{k}", "seat": seat, "agent": agent,
                         "score": score, "status": "complete"})
    return conform("scores", pl.DataFrame(data))


def _population_fitness(steps: int, lr: float) -> float:
    """Σ x_i f_i after a hand-written exponential-weights replicator on :data:`PD`: uniform start;
    per step f = PD·x, stop if max|f − x·f| < 1e-6, else x ← x·exp(η(f − x·f)) / Σ."""
    x = np.array([0.5, 0.5])
    for _ in range(steps):
        f = PD @ x
        advantage = f - x @ f
        if np.abs(advantage).max() < 1e-6:
            break
        x = x * np.exp(lr * advantage)
        x = x / x.sum()
    return float(x @ (PD @ x))


def _store(path: Path, metrics: pl.DataFrame, scores: pl.DataFrame) -> Path:
    cells = pl.DataFrame({"cell_id": ["r1/nm"], "variant": ["default"]})
    designs = conform("design_quality", pl.DataFrame(schema={"cell_id": pl.String()}))
    con = duckdb.connect(str(path))
    for name, frame in {"cells": cells, "metrics": metrics, "scores": scores, "design_quality": designs}.items():
        con.register("source", frame.to_arrow())
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM source")
        con.unregister("source")
    con.close()
    return path


def test_schema_declares_the_defaults_once() -> None:
    assert (REPLICATOR_STEPS, REPLICATOR_LR, DEFAULT_RESAMPLES) == (1000, 0.1, 1000)
    with pytest.raises(KeyError, match=r"evaluation.nope"):
        schema_default("evaluation", "nope")


@pytest.mark.parametrize(("steps", "lr"), [(5, 0.1), (3, 0.5), (1000, 0.1)])
def test_fitness_interval_uses_the_configured_replicator_settings(tmp_path: Path, steps: int, lr: float) -> None:
    scores = _scores()
    metrics = compute_metrics(scores, steps=steps, lr=lr)
    store = _store(tmp_path / "store.duckdb", metrics, scores)
    out = tmp_path / "tables"
    tables_from_store(store, out, dr_rule="strictest", n_bootstrap=20, seed=11, steps=steps, lr=lr)
    per_game = pl.read_csv(out / "per_game.csv", schema_overrides=csv_schema("per_game"))
    row = per_game.filter((pl.col("metric") == "Fitness") & (pl.col("agent") == LLM)).row(0, named=True)
    expected = _population_fitness(steps, lr)
    assert row["mean"] == pytest.approx(expected, abs=1e-9)
    assert row["ci_low"] == pytest.approx(expected, abs=1e-9)
    assert row["ci_high"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("steps", "lr"), [(5, 0.1), (3, 0.5)])
def test_hand_replicator_matches_the_closed_form(steps: int, lr: float) -> None:
    # In this PD f_A − f_B = −1 at every x, so each update lowers the log-odds of A by η:
    # x_A = 1 / (1 + e^(η·steps)); population fitness x·PD·x = 2x_A² + 3x_A·x_B + x_B².
    xa = 1.0 / (1.0 + math.exp(lr * steps))
    xb = 1.0 - xa
    assert _population_fitness(steps, lr) == pytest.approx(2 * xa**2 + 3 * xa * xb + xb**2, abs=1e-12)
    # 5 steps at η = 0.1: x_A = 1/(1 + e^0.5) = 0.3775, fitness 1.3775; the 1000-step default ends near 1
    assert _population_fitness(5, 0.1) == pytest.approx(1.37754, abs=1e-5)
    assert _population_fitness(1000, 0.1) < 1.0001


def test_the_tables_rule_settings_carry_the_configured_replicator(tmp_path: Path) -> None:
    # the tables rule passes tables_settings(config) unchanged: a config with steps 3 / η 0.5
    # gives Fitness intervals of that replicator run (the rule used to drop both)
    from coopeval.pipeline.config import validate_config
    from coopeval.studies.coopeval.tables.from_store import tables_settings

    config = validate_config({
        "seed": 11,
        "agents": [{"model": "x/b", "style": "IO", "table_label": "Bee"}, {"model": "x/a", "style": "CoT"}],
        "evaluation": {"steps": 3, "lr": 0.5},
        "tables": {"bootstrap": 20},
    })
    settings = tables_settings(config)
    assert settings == {
        "dr_rule": "strictest", "n_bootstrap": 20, "seed": 11, "steps": 3, "lr": 0.5,
        "agent_order": [B, A], "agent_labels": {B: "Bee"}, "agent_llm": {A: True, B: True},
    }
    scores = _scores()
    store = _store(tmp_path / "store.duckdb", compute_metrics(scores, steps=3, lr=0.5), scores)
    tables_from_store(store, tmp_path / "tables", **settings)
    per_game = pl.read_csv(tmp_path / "tables" / "per_game.csv", schema_overrides=csv_schema("per_game"))
    row = per_game.filter((pl.col("metric") == "Fitness") & (pl.col("agent") == LLM)).row(0, named=True)
    xa = 1.0 / (1.0 + math.exp(0.5 * 3))  # closed form, see test_hand_replicator_matches_the_closed_form
    expected = 2 * xa**2 + 3 * xa * (1 - xa) + (1 - xa) ** 2
    assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx((expected, expected, expected), abs=1e-9)
    header = next(line for line in (tmp_path / "tables" / "per_game.md").read_text().splitlines() if line.startswith("| Mechanism"))
    assert header == f"| Mechanism | Bee | {A} | {LLM} |"
