"""The gossip study inside the pipeline: registry, composed config schema, cell paths, manifest,
store (with the shared tables' ``study`` column) and the figures and tables read from it."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pytest

from coopeval.core.errors import ConfigError
from coopeval.core.io import write_parquet_atomic
from coopeval.pipeline.config import load_config, validate_config
from coopeval.pipeline.store import build_store
from coopeval.pipeline.studies import STUDIES, all_cells, cell_uses_local_llm
from coopeval.studies.gossip.catalog import FIGURES
from tests.helpers import play_study_cell

ROOT = Path(__file__).resolve().parents[3]
STUDY = STUDIES["gossip"]


def test_registered_with_default_config_part() -> None:
    config = load_config([ROOT / "config" / "config.yaml"])
    assert "gossip" in config["studies"]
    cells = all_cells(config)["gossip"]
    assert [c["condition"]["name"] for c in cells] == ["align", "no_gossip", "max", "gamma=0.1", "gamma=0.5"]
    assert all(c["path"] == f"gossip/donation/{c['condition']['name']}/{c['cell_id']}" for c in cells)
    assert all(cell_uses_local_llm(STUDY, c) for c in cells)
    # n = 5: 10 rounds of donor action + gossip; no gossip 10 actions; Max: 4 rounds, 4 honest
    # calls (2 donor actions toward Max, 2 gossips about Max's defections) — the 74 calls the docs state
    assert sum(STUDY.cost(c) for c in cells) == 20 + 10 + 4 + 20 + 20
    assert STUDY.models(config) == ["local/smollm2-135m"]


def test_bad_section_is_a_config_error_naming_the_key() -> None:
    base = load_config([ROOT / "config" / "config.yaml"])
    with pytest.raises(ConfigError, match=r"gossip\.testbeds\[0\]"):
        validate_config({**base, "gossip": {"testbeds": ["chess"]}})
    with pytest.raises(ConfigError, match=r"gossip\.models\[0\]\.model"):
        validate_config({**base, "gossip": {"models": [{"model": "bot/tit-for-tat"}]}})
    with pytest.raises(ConfigError, match=r"gossip\.testbed_params\.donation\.n"):
        validate_config({**base, "gossip": {"testbed_params": {"donation": {"n": 13}}}})


def test_store_figures_and_tables(tmp_path: Path) -> None:
    config = load_config([ROOT / "config" / "config.yaml", ROOT / "config" / "smoke.yaml"])
    cells = [
        c for c in all_cells(config)["gossip"]
        if c["testbed"] == "donation" and c["condition"]["name"] in ("align", "no_gossip", "max")
    ]
    paths: dict[str, list[str]] = {t: [] for t in STUDY.play_tables}
    for cell in cells:
        tables, _ = play_study_cell("gossip", cell)
        for table, frame in tables.items():
            path = tmp_path / "play" / cell["path"] / f"{table}.parquet"
            write_parquet_atomic(frame, path)
            paths[table].append(str(path))
    manifest = tmp_path / "gossip_cells.tsv"
    manifest.write_text(STUDY.manifest(cells), encoding="utf-8")
    store = tmp_path / "store.duckdb"
    build_store(paths, store, manifests={str(manifest): STUDY.manifest_table})
    con = duckdb.connect(str(store), read_only=True)
    try:
        rows = con.execute(
            "SELECT r.model, discounted_return_mean, gini FROM gossip_run_metrics r JOIN gossip_cells c USING (cell_id) "
            "WHERE r.condition = 'align' ORDER BY model"
        ).fetchall()
        studies = con.execute("SELECT DISTINCT study, mechanism, game FROM decisions ORDER BY ALL").fetchall()
        image = con.execute(
            "SELECT DISTINCT image_score FROM gossip_agent_metrics WHERE model = 'bot/always-defect' AND condition = 'align'"
        ).fetchall()
    finally:
        con.close()
    by_model = {m: (g, gini) for m, g, gini in rows}
    assert by_model["bot/always-cooperate"][0] == pytest.approx(15.4381, abs=5e-5)
    assert by_model["bot/always-cooperate"][1] == pytest.approx(0.0037, abs=5e-5)
    assert by_model["bot/always-defect"][0] == 0 and math.isnan(by_model["bot/always-defect"][1])
    assert image == [(-4.0,)]
    assert {s for s, _, _ in studies} == {"gossip"} and {g for _, _, g in studies} == {"donation"}

    from coopeval.studies.gossip.figures import render_figures, render_tables

    written = render_figures(store, tmp_path / "figures", ["html"])
    assert sorted(p.stem for p in written) == sorted(e.stem for e in FIGURES)
    tables = render_tables(store, ["donation", "pd"], tmp_path / "tables", tmp_path / "pages")
    assert {p.name for p in tables} >= {"gossip_donation.csv", "gossip_donation.md", "gossip_donation.tex", "gossip_donation.html"}
    markdown = (tmp_path / "tables" / "gossip_donation.md").read_text()
    assert "15.44" in markdown and "NaN†" in markdown
