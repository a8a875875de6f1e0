"""Decision ids of mechanism variants (issue 46, "a defect found on the way"): variants of one
mechanism that differ only in a setting no prompt states (``num_rounds``) or in ``discount``
give their cells distinct decision ids, default cells keep theirs, and two variants with the
same settings are refused when the cells are built (before any play job)."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.core.errors import ConfigError
from coopeval.core.hashing import content_hash
from coopeval.pipeline.store import build_store
from tests.helpers import play_study_cell, study_cells

ROSTER = [{"model": "bot/tit-for-tat"}, {"model": "bot/always-defect"}]
BASE = {
    "agents": ROSTER,
    "games": ["prisoners_dilemma"],
    "mechanisms": ["Repetition"],
    "seed": 5,
    "mechanism_params": {"Repetition": {"num_rounds": 4, "discount": 0.8, "lookup_depth": 3}},
}


def test_variants_differing_in_rounds_or_discount_store_together(tmp_path):
    config = {
        **BASE,
        "variants": [
            {"mechanism": "Repetition", "name": "r3", "params": {"num_rounds": 3}},
            {"mechanism": "Repetition", "name": "d07", "params": {"discount": 0.7}},
        ],
    }
    cells = study_cells("coopeval", config)
    assert [c["variant"] for c in cells] == ["default", "r3", "d07"]
    paths = []
    frames = {}
    for cell in cells:
        tables, _ = play_study_cell("coopeval", cell)
        frames[cell["variant"]] = tables["decisions"]
        path = tmp_path / cell["cell_id"] / "decisions.parquet"
        path.parent.mkdir()
        tables["decisions"].write_parquet(path)
        paths.append(str(path))
    # 4 match-ups (2 agents, 2 seats) × rounds × 2 seats: 4·4·2, 4·3·2, 4·4·2 decisions
    assert [frames[v].height for v in ("default", "r3", "d07")] == [32, 24, 32]
    counts = build_store({"decisions": paths}, tmp_path / "store.duckdb")  # no DuplicateDecisionError
    assert counts["decisions"] == 88

    # the default cell's ids are those of its bare position (unchanged by the fix); a variant's
    # position carries its full settings
    first = {"seed": 5, "game": "prisoners_dilemma", "mechanism": "Repetition", "replicate": 1,
             "agents": ["bot/tit-for-tat", "bot/tit-for-tat"], "round": 1, "seat": 0, "kind": "action"}
    row = pl.col("matchup_id") == "bot/tit-for-tat|bot/tit-for-tat"
    chosen = row & (pl.col("round") == 1) & (pl.col("seat") == 1)  # the table's seats count from 1
    assert frames["default"].filter(chosen)["decision_id"].to_list() == [content_hash(first, 16)]
    r3 = {**first, "settings": {"mechanism_params": {"num_rounds": 3, "discount": 0.8, "lookup_depth": 3}, "game_params": {}}}
    assert frames["r3"].filter(chosen)["decision_id"].to_list() == [content_hash(r3, 16)]


def test_two_variants_with_the_same_settings_are_refused_before_play():
    config = {
        **BASE,
        "variants": [
            {"mechanism": "Repetition", "name": "r3", "params": {"num_rounds": 3}},
            {"mechanism": "Repetition", "name": "three", "params": {"num_rounds": 3, "discount": 0.8}},
        ],
    }
    with pytest.raises(ConfigError, match=r"^config variants: Repetition variants 'r3' and 'three' have the same settings on prisoners_dilemma"):
        study_cells("coopeval", config)
