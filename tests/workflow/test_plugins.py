"""A study defined outside ``src/`` runs through the smoke workflow end to end: the config key
``plugins`` imports ``tests/plugins/toy_study.py`` (on PYTHONPATH for the run), which registers
the study and its tables; nothing else is edited (issue 20, the study recipe)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.pipeline.workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "tests" / "plugins"


@pytest.mark.slow
def test_toy_study_runs_end_to_end(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "toy.yaml").write_text("plugins: [toy_study]\nstudies: [toy]\ntoy: {rounds: 4, replicates: 3}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work / "src"), str(PLUGINS)])}
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "all", "--configfile", "config/smoke.yaml", "toy.yaml"]
    run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "studies: toy (3 cells)" in run.stderr
    con = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    try:
        # round t of replicate r earns t * r: 4 rounds sum to 10 r
        rows = con.execute("SELECT replicate, count(*), sum(points) FROM toy_rounds GROUP BY replicate ORDER BY replicate").fetchall()
        assert rows == [(1, 4, 10.0), (2, 4, 20.0), (3, 4, 30.0)]
        cells = con.execute("SELECT cell_id, replicate, rounds FROM toy_cells ORDER BY replicate").fetchall()
        assert [(r, n) for _, r, n in cells] == [(1, 4), (2, 4), (3, 4)]
        played = {row[0] for row in con.execute("SELECT DISTINCT cell_id FROM toy_rounds").fetchall()}
        assert played == {c[0] for c in cells}
        assert con.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0
    finally:
        con.close()
    # the other studies are not configured: nothing of theirs ran
    assert not (work / "results" / "play" / "coopeval").exists()
