"""Replicate summaries and the Tables 1–2 layout."""

from __future__ import annotations

import math

import polars as pl
import pytest

from coopeval.studies.gossip.summary import paper_table, replicate_summary, to_latex, to_markdown
from tests.helpers import play_study_cell, study_cells


@pytest.fixture(scope="module")
def runs() -> pl.DataFrame:
    cells = study_cells("gossip", {"seed": 0, "gossip": {
        "matching": "align_sweep", "replicates": 2, "conditions": ["align"],
        "models": [{"model": "bot/always-cooperate"}, {"model": "bot/always-defect"}],
    }})
    frames = [play_study_cell("gossip", c)[0]["gossip_run_metrics"] for c in cells]
    return pl.concat(frames)


def test_replicate_summary(runs: pl.DataFrame) -> None:
    summary = replicate_summary(runs)
    assert summary.height == 2
    coop = summary.filter(pl.col("model") == "bot/always-cooperate").row(0, named=True)
    assert coop["n_replicates"] == 2 and coop["discounted_return"] == pytest.approx(15.4381, abs=5e-5)
    assert coop["discounted_return_se"] == 0
    defect = summary.filter(pl.col("model") == "bot/always-defect").row(0, named=True)
    assert math.isnan(defect["gini"]) and defect["gini_nan_runs"] == 2


def test_paper_table_layout(runs: pl.DataFrame) -> None:
    table = paper_table(replicate_summary(runs))
    assert table.columns == ["Model", "Condition", "Cooperation", "Image score", "Return", "Reward per round", "Discounted return", "Gini"]
    row = table.filter(pl.col("Model") == "bot/always-cooperate").row(0, named=True)
    assert row["Discounted return"] == "15.44" and row["Reward per round"] == "2.00" and row["Gini"] == "0.00"
    assert table.filter(pl.col("Model") == "bot/always-defect")["Gini"][0] == "NaN† (0/2 runs)"
    md = to_markdown(table)
    assert "| Model |" in md and "†" in md
    tex = to_latex(table)
    assert r"\toprule" in tex and r"$^\dagger$" in tex


def test_figure_frames() -> None:
    from coopeval.studies.gossip.summary import (
        cooperation_by_interaction_index,
        cooperation_by_round,
        tone_distribution,
    )

    cells = study_cells("gossip", {"seed": 0, "gossip": {"conditions": ["max", "align"], "models": [{"model": "bot/discriminator"}]}})
    rounds = pl.concat([play_study_cell("gossip", c)[0]["gossip_rounds"] for c in cells])
    by_index = cooperation_by_interaction_index(rounds)
    assert by_index["target_index"].to_list() == [2, 4, 6, 8] and by_index["cooperation"].to_list() == [0.0] * 4
    tones = tone_distribution(rounds)
    assert tones.filter(pl.col("action") == "cooperate")["tone"].to_list() == ["praising"]
    per_round = cooperation_by_round(rounds)
    assert set(per_round["condition"]) == {"max", "align"}
