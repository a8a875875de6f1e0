"""The store's shared tables speak every study's language: ``setting`` and ``environment``
hold what each study writes as mechanism and game, and CoopEval's names still read the same."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from coopeval.core.schemas import SCHEMAS
from coopeval.pipeline.store import build_store

ROWS = [("coopeval", "Repetition", "PrisonersDilemma"), ("gossip", "align", "donation"), ("evolution", "evolution/vh", "donor_game")]


def _decisions(path: Path) -> Path:
    schema = SCHEMAS["decisions"]
    records = [{"cell_id": f"c{i}", "source": "ours", "run": "r1", "study": s, "mechanism": m, "game": g, "decision_id": f"d{i}", "status": "ok"}
               for i, (s, m, g) in enumerate(ROWS)]  # fmt: skip
    pl.DataFrame([{k: r.get(k) for k in schema} for r in records], schema=schema).write_parquet(path)
    return path


def test_setting_and_environment_hold_each_studys_values_and_coopevals_names_still_read(tmp_path: Path) -> None:
    store = tmp_path / "coopeval.duckdb"
    build_store({"decisions": [str(_decisions(tmp_path / "d.parquet"))]}, store)
    with duckdb.connect(str(store), read_only=True) as con:
        found = con.execute("SELECT study, setting, environment, mechanism, game FROM decisions ORDER BY cell_id").fetchall()
        assert found == [(s, m, g, m, g) for s, m, g in ROWS]
        assert con.execute("SELECT decision_id FROM decisions WHERE mechanism = 'align' AND game = 'donation'").fetchall() == [("d1",)]
        for table in ("decisions", "llm_calls"):  # the record's columns in their order, then the two neutral ones
            columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
            assert columns == [*SCHEMAS[table], "setting", "environment"], table
        # stored once: mechanism and game are generated from setting and environment
        generated = dict(con.execute("SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'decisions'").fetchall())
        assert "setting" in str(generated["mechanism"]) and "environment" in str(generated["game"])
        assert [r[0] for r in con.execute("DESCRIBE scores").fetchall()] == list(SCHEMAS["scores"])  # other tables unchanged
