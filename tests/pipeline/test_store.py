"""The store step streams Parquet into DuckDB under a memory limit (issue 12 item 5)."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from coopeval.pipeline.store import (
    STORE_MEMORY_ENV,
    DuplicateDecisionError,
    build_store,
    source_commit,
)


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


def test_registered_views_check_their_table_and_columns() -> None:
    """A study's store views (coopeval.core.schemas.register_views) rename an existing table's
    columns; an unknown table or column is refused, naming it."""
    from coopeval.core.schemas import StoreView, register_views

    view = StoreView("gossip_rounds", {"seller": "first_agent", "round": "round"}, ("testbed", "mar'ket"))
    assert view.sql("v") == 'CREATE VIEW "v" AS SELECT "first_agent" AS "seller", "round" AS "round" FROM "gossip_rounds" WHERE "testbed" = \'mar\'\'ket\''
    with pytest.raises(ValueError, match="table 'nope' is not registered"):
        register_views({"v": StoreView("nope", {"a": "a"}, ("a", "x"))})
    with pytest.raises(ValueError, match="has no column\\(s\\) donor"):
        register_views({"v": StoreView("gossip_rounds", {"donor": "donor"}, ("testbed", "donation"))})
    import coopeval.studies.gossip.records  # noqa: F401  (registers the gossip views)

    with pytest.raises(ValueError, match="'gossip_pd_rounds' is already registered with another definition"):
        register_views({"gossip_pd_rounds": view})


def test_store_refuses_one_decision_id_in_two_rows(tmp_path):
    """A decision id names one decision (issue 41 item 1): two rows with one id, here the same
    bot's decision in two cells, are refused with the id and both cells named, and no store is left."""
    paths = []
    for cell in ("cellA", "cellB"):
        path = tmp_path / cell / "decisions.parquet"
        path.parent.mkdir()
        pl.DataFrame({"cell_id": [cell, cell], "decision_id": ["same", f"own-{cell}"]}).write_parquet(path)
        paths.append(str(path))
    out = tmp_path / "store.duckdb"
    with pytest.raises(DuplicateDecisionError, match=r"1 decision_id value\(s\) occur in more than one row, e\.g\. same \(2 rows, cells cellA, cellB\)"):
        build_store({"decisions": paths}, out)
    assert not out.exists() and not (tmp_path / "store.duckdb.tmp").exists()
    counts = build_store({"decisions": paths[:1]}, out)
    assert counts["decisions"] == 2


def test_provenance_names_the_commit(tmp_path):
    """The store's provenance names the git commit of the code that wrote it (issue 41 item 10)."""
    import subprocess
    from pathlib import Path

    import coopeval

    head = subprocess.run(["git", "-C", str(Path(coopeval.__file__).parent), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert len(head) == 40
    build_store({}, tmp_path / "store.duckdb")
    with duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True) as con:
        (commit,) = con.execute("SELECT value FROM provenance WHERE key = 'commit'").fetchone()
    assert commit == source_commit()
    assert commit.removesuffix("+dirty") == head
