"""benchmarks/estimate_vs_store.py: the estimate's input tokens beside the store's prompt tokens
per (study, kind), and a store it cannot read refused in one line before anything is estimated."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "estimate_vs_store.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("estimate_vs_store", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _store(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE decisions (study VARCHAR, kind VARCHAR)")
    con.execute("INSERT INTO decisions VALUES ('gossip', 'gossip'), ('gossip', 'gossip'), ('gossip', 'donor_action')")
    con.execute("CREATE TABLE llm_calls (study VARCHAR, kind VARCHAR, attempt BIGINT, prompt_tokens BIGINT)")
    con.execute("INSERT INTO llm_calls VALUES ('gossip', 'gossip', 0, 300), ('gossip', 'gossip', 1, 999), ('gossip', 'gossip', 0, 100), ('gossip', 'donor_action', 0, 0)")
    con.close()
    return path


def test_tokens_per_kind_and_study_beside_the_recorded_ones(script, tmp_path):
    store = _store(tmp_path / "s.duckdb")
    estimate = {
        "studies": {"gossip": {"decisions_min": 1, "decisions_max": 3}},
        "rows": [
            {"study": "gossip", "kind": "gossip", "decisions_min": 0, "decisions_max": 2, "input_tokens": 360},
            {"study": "gossip", "kind": "donor_action", "decisions_min": 1, "decisions_max": 1, "input_tokens": 50},
        ],
    }
    rows = {(r["study"], r["kind"]): r for r in script.compare(estimate, script.recorded_decisions(store), script.recorded_prompt_tokens(store))}
    assert (rows[("gossip", "gossip")]["recorded_prompt_tokens"], rows[("gossip", "gossip")]["token_ratio"]) == (400, 0.9)  # re-asks not counted
    assert rows[("gossip", "donor_action")]["token_ratio"] is None  # the bots' 0 tokens are no record
    assert (rows[("gossip", "*")]["input_tokens"], rows[("gossip", "*")]["recorded_prompt_tokens"]) == (410, 400)
    assert rows[("gossip", "*")]["verdict"] == "in range" and rows[("gossip", "donor_action")]["verdict"] == "exact"


@pytest.mark.parametrize(("make", "said"), [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.write_text("agents: []\n"), "not a DuckDB store"),
    (lambda p: duckdb.connect(str(p)).close(), "no decisions table"),
], ids=["missing", "folder", "text", "empty"])
def test_a_store_it_cannot_read_exits_2_in_one_line(script, tmp_path, capsys, make, said):
    store = tmp_path / "x.duckdb"
    make(store)
    assert script.main(["--store", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err
