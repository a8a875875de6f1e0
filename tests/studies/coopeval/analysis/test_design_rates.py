"""NS / WD rates per agent and game for the design-quality figure, from design_quality_summary rows."""

from __future__ import annotations

import math

import polars as pl
import pytest

from coopeval.studies.coopeval.analysis.design_rates import design_rate_frame


def test_rates_pool_sources_with_binomial_se():
    summary = pl.DataFrame(
        {
            "source": ["ours", "reference", "ours"],
            "mechanism": ["Contracting", "Contracting", "Mediation"],
            "game": ["PrisonersDilemma"] * 3,
            "agent": ["a", "a", "b"],
            "n_designs": [2, 2, 0],
            "ns_count": [2, 1, 0],
            "wd_count": [1, 0, 0],
        }
    )
    frame = design_rate_frame(summary)
    assert frame.columns == ["mechanism", "game", "agent", "criterion", "rate", "se", "n_designs"]
    rows = {r["criterion"]: r for r in frame.iter_rows(named=True)}
    # NS: 3 of 4 designs; WD: 1 of 4; b has no valid design and is left out
    assert rows["NS"]["rate"] == 0.75 and rows["NS"]["se"] == pytest.approx(
        math.sqrt(0.75 * 0.25 / 4)
    )
    assert rows["WD"]["rate"] == 0.25 and rows["WD"]["n_designs"] == 4
    assert frame.height == 2
    assert design_rate_frame(summary.head(0)).height == 0
