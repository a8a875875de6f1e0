"""Leaderboards show the tie groups and marks the result tables have, and say why a cell is blank (issue 41 item 8)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb
import pytest

from coopeval.explorer import build_site
from tests.explorer.fake_store import make_store, read_data

RUNS = [  # (model, run, cooperation, discounted return, gini, gini out of range, image score)
    ("model-g", "r1", 0.9, 10.0, 0.2, False, float("nan")),
    ("model-g", "r2", 0.8, 12.0, 1.205, True, 1.0),
    ("model-h", "r1", 0.1, float("inf"), float("nan"), False, float("nan")),
    ("model-h", "r2", 0.2, 3.0, float("nan"), False, float("nan")),
]
"""Gossip runs of testbed pd, condition align, matching align_sweep."""


def _store(path: Path) -> Path:
    make_store(path)
    with duckdb.connect(str(path)) as con:
        for model, run, coop, dret, gini, oor, image in RUNS:
            con.execute(
                "INSERT INTO gossip_run_metrics (cell_id, run, testbed, condition, model, matching, cooperation_ratio_mean, discounted_return_mean,"
                " gini, gini_out_of_range, image_score_mean) VALUES (?, ?, 'pd', 'align', ?, 'align_sweep', ?, ?, ?, ?, ?)",
                [f"pd-{model}-{run}", run, model, coop, dret, gini, oor, image],
            )
        for cell, condition, failed in (("pd-model-g-r3", "align", True), ("pd-model-g-lost", "no_gossip", True)):
            con.execute(  # every round failed: 0.0 measured nothing of the condition
                "INSERT INTO gossip_run_metrics (cell_id, run, testbed, condition, model, matching, cooperation_ratio_mean, all_rounds_failed)"
                " VALUES (?, 'r3', 'pd', ?, 'model-g', 'align_sweep', 0.0, ?)",
                [cell, condition, failed],
            )
        comparisons = [
            ("gossip", "pd/align/align_sweep", "cooperation_ratio_mean", "model-g", "model-h", 0.001),  # significant
            ("gossip", "pd/align/align_sweep", "discounted_return_mean", "model-g", "model-h", 0.6),  # not
            ("evolution", "vh/default", "mean_final", "model-e", "model-f", 0.01),
        ]
        for study, scope, metric, a, b, p in comparisons:
            con.execute("INSERT INTO comparisons (study, scope, metric, a, b, p_adjusted, correction) VALUES (?, ?, ?, ?, ?, ?, 'holm')", [study, scope, metric, a, b, p])
        con.execute("INSERT INTO evo_generations (cell_id, source, run, protocol, model, variant, generation, mean_final, donation_fraction)"
                    " VALUES ('cellF', 'ours', 'r1', 'vh', 'model-f', 'default', 2, 50.0, 0.1)")  # fmt: skip
        con.execute("INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES ('cellR', 'ours', 'r1', 'Reputation', 'prisoners_dilemma', 'model-x', 'Mean', 1.5)")
    return path


@pytest.fixture(scope="module")
def boards(tmp_path_factory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("marks")
    build_site(_store(root / "coopeval.duckdb"), root / "site")
    return read_data(root / "site", "data/index.js")["leaderboards"]


def _row(board: dict[str, Any], **keys: str) -> dict[str, Any]:
    (row,) = [r for r in board["rows"] if all(r[k] == v for k, v in keys.items())]
    return row


def test_gossip_rows_have_the_comparisons_letters(boards):
    g, h = (_row(boards["gossip"], testbed="pd", condition="align", model=m) for m in ("model-g", "model-h"))
    assert (g["coop_group"], h["coop_group"]) == ("a", "b")  # 0.85 above 0.15, p = 0.001
    assert (g["dret_group"], h["dret_group"]) == ("a", "a")  # p = 0.6: one group
    assert g["gini_group"] is None  # not compared
    labels = [c["label"] for c in boards["gossip"]["columns"]]
    assert labels[-3:] == ["cooperation group", "discounted return group", "Gini group"]


def test_evolution_rows_have_the_comparisons_letters(boards):
    e, f = (_row(boards["evolution"], model=m) for m in ("model-e", "model-f"))
    assert (f["final"][0], e["final"][0]) == (50.0, 30.0)
    assert (f["final_group"], e["final_group"]) == ("a", "b")


def test_marks_infinity_and_blanks_say_what_they_are(boards):
    g, h = (_row(boards["gossip"], testbed="pd", condition="align", model=m) for m in ("model-g", "model-h"))
    assert g["gini"][0] == pytest.approx((0.2 + 1.205) / 2)
    assert g["gini_mark"] == "‡"  # outside [0, 1] in a run, as the tables mark it
    assert g["image"][0] == 1.0 and g["image_mark"] == "† (1/2 cells)"  # one run's image score undefined
    assert h["image"][0] is None and h["image_why"] == "NaN†: undefined in every cell"
    assert h["gini"][0] is None and h["gini_why"] == "NaN†: undefined in every cell"
    assert h["dret"][0] == math.inf and h["dret"][1] is None  # not averaged away with the finite run
    reputation = _row(boards["coopeval"], mechanism="Reputation", game="prisoners_dilemma")
    assert reputation["mean"] == [1.5, None]
    assert reputation["fitness"] == [None, None] and reputation["fitness_why"] == "not computed: no replicator dynamics under Reputation (Mean only)"


def test_runs_whose_every_round_failed_are_left_out_and_counted(boards):
    """As the result tables do (``replicate_summary``): a failed run's 0.0 does not pull the mean
    down; the row says how many runs failed; a condition where every run failed keeps its row,
    blank, with the count."""
    g = _row(boards["gossip"], testbed="pd", condition="align", model="model-g")
    assert g["coop"][0] == pytest.approx((0.9 + 0.8) / 2) and g["n"] == 2 and g["failed_runs"] == 1
    lost = _row(boards["gossip"], testbed="pd", condition="no_gossip", model="model-g")
    assert lost["coop"][0] is None and lost["n"] == 0 and lost["failed_runs"] == 1
    assert _row(boards["gossip"], testbed="pd", condition="align", model="model-h")["failed_runs"] == 0
    assert "failed runs" in [c["label"] for c in boards["gossip"]["columns"]]
