"""Aggregated frames behind the core figures, against hand-computed values."""

from __future__ import annotations

import json

import polars as pl
import pytest

from coopeval.studies.coopeval.figures.core import (
    ablation_frame,
    mean_fitness_frame,
    payoff_grid_frame,
)


def _metrics(rows):
    return pl.DataFrame(rows, schema=["cell_id", "mechanism", "game", "agent", "metric", "value"], orient="row")


def test_mean_fitness_frame_averages_runs():
    metrics = _metrics([
        ("c1", "Repetition", "PD", "a", "Mean", 1.0),
        ("c2", "Repetition", "PD", "a", "Mean", 2.0),
        ("c1", "Repetition", "PD", "a", "Fitness", 1.5),
        ("c1", "Repetition", "PD", "a", "DR", -1.0),
    ])
    frame = mean_fitness_frame(metrics)
    assert frame.select("metric", "value", "runs").rows() == [("Fitness", 1.5, 1), ("Mean", 1.5, 2)]


def test_payoff_grid_pools_seats():
    matchups = pl.DataFrame({"cell_id": ["c"] * 3, "matchup_id": ["a|b", "b|a", "a|a"], "agents": [["a", "b"], ["b", "a"], ["a", "a"]]})
    scores = pl.DataFrame({
        "cell_id": ["c"] * 6, "mechanism": ["M"] * 6, "game": ["G"] * 6,
        "matchup_id": ["a|b", "a|b", "b|a", "b|a", "a|a", "a|a"], "seat": [1, 2, 1, 2, 1, 2],
        "agent": ["a", "b", "b", "a", "a", "a"], "score": [0.0, 3.0, 1.0, 2.0, 2.0, 4.0],
    })
    grid = payoff_grid_frame(scores, matchups)
    values = {(r["agent"], r["opponent"]): (r["payoff"], r["n"]) for r in grid.iter_rows(named=True)}
    assert values[("a", "b")] == (1.0, 2)  # a as P1 vs b: 0; a as P2 vs b: 2
    assert values[("b", "a")] == (2.0, 2)
    assert values[("a", "a")] == (3.0, 2)


def test_ablation_frame_assigns_panels():
    cells = pl.DataFrame({
        "cell_id": ["d", "k2", "d07"],
        "mechanism": ["Repetition"] * 3,
        "variant": ["default", "k2", "d07"],
        "mechanism_params": [json.dumps(p) for p in (
            {"lookup_depth": 3, "discount": 0.8, "num_rounds": 15},
            {"lookup_depth": 2, "discount": 0.8, "num_rounds": 15},
            {"lookup_depth": 3, "discount": 0.7, "num_rounds": 15},
        )],
    })
    metrics = _metrics([
        ("d", "Repetition", "PD", "x", "Mean", 1.2),
        ("k2", "Repetition", "PD", "x", "Mean", 1.0),
        ("d07", "Repetition", "PD", "x", "Mean", 1.6),
        ("d07", "Repetition", "PD", "x", "Fitness", 9.0),
    ])
    frame = ablation_frame(metrics, cells)
    rows = sorted(frame.select("parameter", "value", "mean").rows())
    assert rows == [
        ("k (history window)", 2.0, 1.0),
        ("k (history window)", 3.0, 1.2),
        ("δ (continuation probability)", 0.7, pytest.approx(1.6)),
        ("δ (continuation probability)", 0.8, 1.2),
    ]
