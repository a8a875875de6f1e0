"""Every file the workflow reads back is read with an explicit schema (issue 13 kind 10c)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from coopeval.core.io import read_delimited
from coopeval.core.schemas import SCHEMAS
from coopeval.pipeline.config import load_config
from coopeval.pipeline.store import build_store
from coopeval.pipeline.studies import STUDIES
from coopeval.studies.coopeval.cells import MANIFEST_SCHEMA
from coopeval.studies.coopeval.figures.run_page import render_table_pages
from coopeval.studies.coopeval.tables.builder import PER_GAME_COLUMNS

REPO = Path(__file__).resolve().parents[2]
def cells_manifest(tmp_path: Path, ids: tuple[str, ...]) -> Path:
    path = tmp_path / "cells.tsv"
    rows = [f"{cid}\tRepetition\tdefault\tprisoners_dilemma\t1\t{{\"num_rounds\": 3}}\tbot/a,bot/b" for cid in ids]
    path.write_text("\t".join(MANIFEST_SCHEMA) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("ids", [("123456789012", "987654321098"), ("000000000042", "123456789012")])
def test_all_digit_cell_ids_stay_strings_in_the_store(tmp_path: Path, ids: tuple[str, ...]) -> None:
    """Guessed types made the first pair BIGINT (the second stayed text only for its leading zeros)."""
    store = tmp_path / "store.duckdb"
    build_store({}, store, manifests={str(cells_manifest(tmp_path, ids)): "cells"})
    with duckdb.connect(str(store), read_only=True) as con:
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'cells'").fetchall())
        stored = [r[0] for r in con.execute("SELECT cell_id FROM cells ORDER BY cell_id").fetchall()]
        joined = con.execute("SELECT count(*) FROM cells JOIN decisions USING (cell_id)").fetchone()
    assert types["cell_id"] == "VARCHAR" and types["replicate"] == "BIGINT" and types["mechanism_params"] == "VARCHAR"
    assert stored == sorted(ids)  # exactly the ids written, as text, leading zeros kept
    assert joined == (0,)  # joins with the (VARCHAR) record tables


def test_header_mismatch_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "cells.tsv"
    path.write_text("cell_id\tgame\n1\tx\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cells.tsv: columns \['cell_id', 'game'\] differ from the expected .*rerun the rule"):
        read_delimited(path, MANIFEST_SCHEMA, separator="\t")


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_every_study_manifest_reads_back_with_its_schema(study: str, tmp_path: Path) -> None:
    config = load_config([REPO / "config/config.yaml", REPO / "config/smoke.yaml"])
    st = STUDIES[study]
    cells = st.cells(config)
    assert cells
    tmp = tmp_path / "m.tsv"
    tmp.write_text(st.manifest(cells), encoding="utf-8")
    frame = read_delimited(tmp, SCHEMAS[st.manifest_table], separator="\t")
    assert frame.height == len(cells) and frame["cell_id"].to_list() == [c["cell_id"] for c in cells]
    assert frame.schema["cell_id"] == pl.String


def test_table_pages_keep_an_all_digit_agent_label(tmp_path: Path) -> None:
    tables = tmp_path / "tables"
    tables.mkdir()
    frame = pl.DataFrame(
        {"mechanism": ["Repetition"], "game": ["PrisonersDilemma"], "metric": ["Mean"], "agent": ["007"],
         "mean": [1.5], "se": [None], "rank": [1], "ci_low": [None], "ci_high": [None], "tie_group": ["a"],
         "players": [2], "note": [None]},
        schema_overrides={"se": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "note": pl.String},
    ).select(PER_GAME_COLUMNS)
    (tables / "per_game.csv").write_text(frame.write_csv(), encoding="utf-8")
    (page,) = render_table_pages(tables, tmp_path / "out", ["per_game"], ["Repetition"], ["prisoners_dilemma"])
    text = page.read_text(encoding="utf-8")
    assert "<td>007</td>" in text and '<td class="num">1.5000</td>' in text
