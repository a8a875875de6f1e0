"""config/public_goods_n.yaml through the workflow (issue 34): Public Goods with N = 3, 5, 8
bots under NoMechanism and Repetition; N = 3 plays all 64 rosters, N = 5 the covering sample
(Fitness and DR), N = 8 a random seat-balanced sample (Mean, with a note); the store records each
cell's N and the group-size figure is drawn."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import duckdb
import polars as pl
import pytest

from coopeval.studies.coopeval.rosters import rosters
from coopeval.studies.coopeval.tables.builder import csv_schema
from tests.pipeline.workflow_copy import copy_workflow


@pytest.mark.slow
def test_public_goods_n_overlay_runs_end_to_end(tmp_path):
    work = copy_workflow(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "all", "--configfile", "config/public_goods_n.yaml"]
    run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    assert (work / "results" / "figures" / "group_size.png").stat().st_size > 1000
    con = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    try:
        cells = dict(con.execute("SELECT mechanism || '/' || variant, players FROM cells").fetchall())
        assert cells == {f"{m}/{v}": n for m in ("NoMechanism", "Repetition") for v, n in (("default", 3), ("n5", 5), ("n8", 8))}
        played = dict(
            con.execute(
                "SELECT c.mechanism || '/' || c.players, count(*) FROM matchups m JOIN cells c USING (cell_id) GROUP BY ALL"
            ).fetchall()
        )
        n5, n8 = (len(rosters(4, n, 300, 7, "public_goods", n, 1)) for n in (5, 8))
        assert played == {f"{m}/{n}": k for m in ("NoMechanism", "Repetition") for n, k in ((3, 64), (5, n5), (8, n8))}
        assert n5 == 264 and n8 <= 300
        seats = con.execute(
            "SELECT agent, seat FROM decisions d JOIN cells c USING (cell_id) WHERE c.players = 8 AND c.mechanism = 'NoMechanism'"
        ).fetchall()
        assert set(Counter(seats).values()) == {n8 // 4} and len(Counter(seats)) == 4 * 8  # seat-balanced
        metrics = set(con.execute("SELECT c.mechanism, c.players, m.metric FROM metrics m JOIN cells c USING (cell_id)").fetchall())
        for mechanism in ("NoMechanism", "Repetition"):
            assert {(mechanism, 5, "DR"), (mechanism, 5, "Fitness"), (mechanism, 8, "TensorIncomplete")} <= metrics
            assert (mechanism, 8, "Fitness") not in metrics
        # always-defect never contributes; tit-for-tat always does without a history (NoMechanism)
        rates = dict(
            con.execute(
                "SELECT agent, avg(CASE WHEN action = 0 THEN 1.0 ELSE 0.0 END) FROM decisions d JOIN cells c USING (cell_id)"
                " WHERE c.mechanism = 'NoMechanism' AND kind = 'action' GROUP BY agent"
            ).fetchall()
        )
        assert rates["bot/always-defect"] == 0.0 and rates["bot/tit-for-tat"] == 1.0
        # the per-game table has each N's rows (issue 41 item 9): Means as pooled over the store's scores
        means = {
            (m, n, a): v
            for m, n, a, v in con.execute(
                "SELECT c.mechanism, c.players, s.agent, avg(s.score) FROM scores s JOIN cells c USING (cell_id) GROUP BY ALL"
            ).fetchall()
        }
    finally:
        con.close()
    per_game = pl.read_csv(work / "results" / "tables" / "per_game.csv", schema=csv_schema("per_game"))
    table = per_game.filter((pl.col("metric") == "Mean") & (pl.col("agent") != "LLM Average"))
    got = {(m, n, a): v for m, n, a, v in table.select("mechanism", "players", "agent", "mean").iter_rows()}
    assert got.keys() == means.keys() and all(got[k] == pytest.approx(v, abs=1e-12) for k, v in means.items())
    blank = per_game.filter((pl.col("players") == 8) & (pl.col("metric") != "Mean"))
    assert set(blank["metric"]) == {"Fitness", "DR", "DR_exact"} and blank["mean"].null_count() == blank.height
    assert all(note.startswith("TensorIncomplete: ") for note in blank["note"])
    assert per_game.filter((pl.col("players") == 5) & (pl.col("metric") == "Fitness"))["mean"].null_count() == 0
