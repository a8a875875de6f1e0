"""The store step streams Parquet into DuckDB under a memory limit (issue 12 item 5)."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from coopeval.pipeline.store import STORE_MEMORY_ENV, build_store


def test_store_streams_files_under_a_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_MEMORY_ENV, "64MB")
    paths = []
    for k in range(3):
        path = tmp_path / f"cell{k}" / "decisions.parquet"
        path.parent.mkdir()
        pl.DataFrame({"cell_id": [f"c{k}", f"c{k}"], "points": [1.0 * k, 2.0]}).write_parquet(path)
        paths.append(str(path))
    out = tmp_path / "store.duckdb"
    counts = build_store({"decisions": paths}, out)
    assert counts["decisions"] == 6
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT sum(points) FROM decisions").fetchone()[0] == pytest.approx(0 + 1 + 2 + 3 * 2.0)
    con.close()


def test_bad_memory_limit_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match="COOPEVAL_STORE_MEMORY='lots': write an amount like 1GB"):
        build_store({}, tmp_path / "store.duckdb")
