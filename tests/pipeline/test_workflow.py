"""End to end on the smoke config: snakemake plays, parses, evaluates, stores and plots; a
second run has nothing to do; the store holds the documented tables (docs/protocol/engineering.md#journal, #store)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.pipeline.workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("smoke"))
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "all", "--configfile", "config/smoke.yaml"]
    first = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-4000:]
    second = subprocess.run([*command, "--dry-run"], cwd=work, capture_output=True, text=True, timeout=300)
    return work, first, second


@pytest.mark.slow
def test_rerun_has_nothing_to_do(smoke_run):
    _work, _first, second = smoke_run
    assert second.returncode == 0
    assert "Nothing to be done" in second.stdout + second.stderr


@pytest.mark.slow
def test_store_tables(smoke_run):
    work, _first, _ = smoke_run
    con = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    tables = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
    assert {"llm_calls", "decisions", "matchups", "scores", "metrics", "trajectories", "cells", "provenance"} <= tables
    mechanisms = {row[0] for row in con.execute("SELECT DISTINCT mechanism FROM decisions WHERE study = 'coopeval'").fetchall()}
    expected = {row[0] for row in con.execute("SELECT DISTINCT mechanism FROM cells").fetchall()}
    assert mechanisms == expected
    # The evolution study's part: both protocols, every variant, its own tables filled.
    evo = {row[0] for row in con.execute("SELECT DISTINCT mechanism FROM decisions WHERE cell_id IN (SELECT cell_id FROM evolution_cells)").fetchall()}
    assert evo == {"evolution/vh", "evolution/horibe"}
    variants = {row[0] for row in con.execute("SELECT DISTINCT variant FROM evolution_cells").fetchall()}
    assert variants == {"default", "costly_punishment", "partner_choice"}
    for table in ("evo_events", "evo_strategies", "evo_generations", "invasion_tests", "strategy_matrix", "matrix_features"):
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0, table
    # Every decision of a bot is valid and sampled; draws lie in [0, 1).
    bad = con.execute("SELECT count(*) FROM decisions WHERE kind = 'action' AND (status <> 'ok' OR draw < 0 OR draw >= 1)").fetchone()[0]
    assert bad == 0
    # Repetition PD: tit-for-tat vs always-defect scores 0.8 (hand-computed, δ = 0.8, T = 15).
    score = con.execute(
        "SELECT score FROM scores WHERE mechanism = 'Repetition' AND game = 'PrisonersDilemma' "
        "AND matchup_id = 'bot/tit-for-tat|bot/always-defect' AND seat = 1"
    ).fetchone()[0]
    assert score == pytest.approx(0.8)
    # Gossip (docs/protocol/tournament.md#matchups-and-call-counts oracles under align_sweep, n = 9): all-cooperate mean G and Gini; all-defect.
    gossip = {
        model: (g, gini, image)
        for model, g, gini, image in con.execute(
            "SELECT model, discounted_return_mean, gini, image_score_mean FROM gossip_run_metrics "
            "WHERE testbed = 'donation' AND condition = 'align'"
        ).fetchall()
    }
    assert gossip["bot/always-cooperate"][0] == pytest.approx(15.4381, abs=5e-5)
    assert gossip["bot/always-cooperate"][1] == pytest.approx(0.0037, abs=5e-5)
    assert gossip["bot/always-defect"][0] == 0 and math.isnan(gossip["bot/always-defect"][1])
    assert gossip["bot/always-defect"][2] == -4
    con.close()
    figures = list((work / "results" / "figures").glob("*.png"))
    assert figures and all(f.stat().st_size > 1000 for f in figures)


@pytest.mark.slow
def test_report_builds(smoke_run):
    """`snakemake --report` after the smoke run: every figure and table registered, the judge's
    outputs empty (bots give no reasoning to judge)."""
    work, _first, _ = smoke_run
    report = work / "report.html"
    command = [sys.executable, "-m", "snakemake", "--report", str(report), "--configfile", "config/smoke.yaml"]
    result = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    text = report.read_text()
    for entry in ("run_summary.html", "justifications_radar.svg", "conditional_Repetition_prisoners_dilemma.svg",
                  "voting_Contracting_trust_game.svg", "payoffs_Mediation_prisoners_dilemma.svg", "per_game_NoMechanism_trust_game.html"):
        assert entry in text
    assert "Seed 7, 1 replicate(s)" in text  # the top-level page rendered from the config
    for entry in ("evo_resources.svg", "evo_matrices.svg", "evo_features.svg", "evo_lineage.html", "oes.html"):
        assert entry in text
    con = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM judgements").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM llm_calls WHERE kind = 'judge'").fetchone()[0] == 0
    con.close()
