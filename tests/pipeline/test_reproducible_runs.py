"""Issue 45: the same config gives the same store. Two runs of a two-cell config on the embedded
model (prompt reuse on), side by side from empty caches, one with ``--cores 1`` and one with
``--cores 2``, through ``benchmarks/reproducibility.py``: every response, decision and store
table equal. The match-ups of a cell ask concurrently, so the runtime's sequence of requests,
and with prompt reuse its texts, would follow timing without the fixed order
(:mod:`coopeval.agents.turn`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

OVERLAY = {
    "studies": ["coopeval"],
    "agents": [{"model": "local/smollm2-135m", "style": "IO"}, {"model": "bot/tit-for-tat"}],
    "games": ["prisoners_dilemma"],
    "mechanisms": ["NoMechanism", "Repetition"],
    "mechanism_params": {"Repetition": {"num_rounds": 4, "discount": 0.8, "lookup_depth": 3}},
}


def test_two_runs_side_by_side_give_the_same_store(tmp_path):
    overlay = tmp_path / "two_cells.yaml"
    overlay.write_text(yaml.safe_dump(OVERLAY), encoding="utf-8")
    command = [sys.executable, str(REPO / "benchmarks" / "reproducibility.py"), "--cores", "1", "2",
               "--workdir", str(tmp_path / "runs"), "--", "--configfile", str(overlay)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=REPO)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["exit"] == [0, 0], done.stderr[-3000:]
    # NoMechanism: 3 ordered pairs with the model seated (model-model 2 seats) = 4 model answers;
    # Repetition: the same pairs over 4 rounds = 16; each row has its bot co-player's rows too.
    local = _local_calls(tmp_path / "runs" / "a" / "results" / "coopeval.duckdb")
    assert local == 4 + 16
    assert result["calls"] >= local and result["decisions"] >= local
    assert result["responses_differ"] == 0 and result["decisions_differ"] == 0
    assert result["tables_differing"] == [] and result["csv_tables_differing"] == []
    assert result["identical"] is True and done.returncode == 0


def _local_calls(store: Path) -> int:
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    (n,) = con.execute("SELECT count(*) FROM llm_calls WHERE model = 'local/smollm2-135m' AND attempt = 0").fetchone()
    con.close()
    return int(n)
