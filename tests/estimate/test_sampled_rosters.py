"""``coopeval estimate`` counts a sampled roster (``max_matchups``,
docs/protocol/tournament.md#match-up-samples): the cell is played as it is, so each agent makes
N × (sampled rosters) / S action decisions."""

from __future__ import annotations

import yaml

from coopeval.estimate.report import estimate_config
from coopeval.pipeline.config import merge_overlay, validate_config
from coopeval.studies.coopeval.rosters import rosters
from tests.shared_data import REPO

MINI = "openai/gpt-4o-mini"
OVERLAY = {
    "studies": ["coopeval"],
    "agents": [
        {"model": MINI, "style": "IO", "params": {"max_tokens": 20}},
        {"model": MINI, "label": "mini-again", "style": "IO", "params": {"max_tokens": 20}},
        {"model": "bot/tit-for-tat"},
        {"model": "bot/always-defect"},
    ],
    "games": ["public_goods"],
    "game_params": {"public_goods": {"players": 5}},
    "mechanisms": ["NoMechanism"],
    "max_matchups": 100,
    "replicates": 1,
}


def test_the_estimate_counts_the_sample(tmp_path):
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    config = validate_config({**merge_overlay(base, OVERLAY), "cache_dir": str(tmp_path / "cache")})
    sample = rosters(4, 5, 100, int(config["seed"]), "public_goods", 5, 1)
    assert len(sample) <= 100 < 4**5
    estimate = estimate_config(config)
    (row,) = [r for r in estimate.rows if (r["group"], r["model"], r["kind"]) == ("NoMechanism", MINI, "action")]
    # two entries of the model, each in every one of 5 seats len(sample) / 4 times
    assert row["decisions_min"] == row["decisions_max"] == 2 * 5 * len(sample) // 4
