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
from tests.helpers import play_study_cell, study_cells

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


def test_store_has_one_role_named_rounds_view_per_testbed(tmp_path: Path) -> None:
    """``gossip_rounds`` names the pair by position and the testbed's roles in ``first_role`` /
    ``second_role``; the store's ``gossip_<testbed>_rounds`` views name the columns by role
    (issue 20 item 2). Rewards under always-cooperate, by hand: donation (−c, b) = (−1, 5); PD
    CC (b − c, b − c) = (4, 4); trust, in round 1 all 5 units invested and 2I returned,
    (−5 + 10, 15 − 10) = (5, 5); market Hc (3 − 1, 6 − 3) = (2, 3)."""
    section = {"testbeds": ["donation", "pd", "trust", "market"], "conditions": ["align"], "models": [{"model": "bot/always-cooperate"}]}
    cells = study_cells("gossip", {"seed": 1, "gossip": section})
    paths: dict[str, list[str]] = {t: [] for t in STUDY.play_tables}
    for cell in cells:
        tables, _ = play_study_cell("gossip", cell)
        for table, frame in tables.items():
            path = tmp_path / cell["path"] / f"{table}.parquet"
            write_parquet_atomic(frame, path)
            paths[table].append(str(path))
    store = tmp_path / "store.duckdb"
    build_store(paths, store)
    expected = {
        "donation": ("donor", "recipient", -1.0, 5.0),
        "pd": ("player_1", "player_2", 4.0, 4.0),
        "trust": ("investor", "trustee", 5.0, 5.0),
        "market": ("seller", "buyer", 2.0, 3.0),
    }
    con = duckdb.connect(str(store), read_only=True)
    try:
        views = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'VIEW' AND table_name LIKE 'gossip%'").fetchall()}
        assert views == {f"gossip_{key}_rounds" for key in expected}
        for key, (first, second, first_reward, second_reward) in expected.items():
            roles = con.execute("SELECT DISTINCT first_role, second_role FROM gossip_rounds WHERE testbed = ?", [key]).fetchall()
            assert roles == [(first, second)]
            view = f"gossip_{key}_rounds"
            columns = [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()]
            assert {first, second, f"{first}_reward", f"{second}_kind", f"{second}_tone", f"{first}_action_justification"} <= set(columns)
            assert not {c for c in columns if c.startswith(("first_", "second_"))}
            rows = con.execute(f"SELECT DISTINCT {first}_reward, {second}_reward FROM {view} WHERE round = 1").fetchall()
            assert rows == [(first_reward, second_reward)]
            same = con.execute(
                f"SELECT count(*) FROM {view} v JOIN gossip_rounds r USING (cell_id, round) "
                f"WHERE v.{first} = r.first_agent AND v.{second} = r.second_agent"
            ).fetchone()
            total = con.execute("SELECT count(*) FROM gossip_rounds WHERE testbed = ?", [key]).fetchone()
            assert same == total and total is not None and total[0] > 0
    finally:
        con.close()
