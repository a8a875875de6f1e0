"""Model-level robustness tables (docs/protocol/evolution.md#horibe-results Table 1 and Table 2 layouts) on the paper's numbers."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.studies.evolution.robustness import (
    feature_regressions,
    oes_decomposition,
    robustness_by_model,
)

# Table 2 of Horibe et al.: model -> (left, right, robustness %)
TABLE2 = {"g25": (22.4, 83.5, 48.0), "g20": (22.6, 73.6, 28.0), "claude": (38.7, 76.9, 3.0), "g15": (30.8, 65.9, 10.0)}


def _frames(variant: str = "default", shift: float = 0.0) -> tuple[pl.DataFrame, pl.DataFrame]:
    feats, tests = [], []
    for model, (left, right, robust) in TABLE2.items():
        right += shift
        for k in range(2):  # two agents with the same features
            feats.append(
                {"protocol": "horibe", "variant": variant, "model": model, "generation": 10, "n_failed_cells": 0, "left": left, "right": right, "oes": right - left,
                 "beta_minus_alpha": right - left + k * 0.0, "entropy": 4.5, "mean_cooperation": (left + right) / 2,
                 "rho_mono": 0.95, "l1": k == 0}
            )
        n_robust = int(robust) if not shift else 100 - int(robust)
        tests += [{"protocol": "horibe", "variant": variant, "model": model, "generation": 10, "robust": i < n_robust} for i in range(100)]
    return pl.DataFrame(feats), pl.DataFrame(tests)


def test_table2_layout() -> None:
    feats, tests = _frames()
    t2 = oes_decomposition(feats, tests)
    assert t2["model"].to_list() == ["g25", "g20", "claude", "g15"]
    assert t2["oes"].to_list() == pytest.approx([61.1, 51.0, 38.2, 35.1])
    assert t2["robustness"].to_list() == pytest.approx([48.0, 28.0, 3.0, 10.0])
    assert robustness_by_model(tests)["n_tested"].to_list() == [100] * 4


def test_table1_oes_regression_matches_the_paper() -> None:
    feats, tests = _frames()
    t1 = feature_regressions(feats, tests)
    oes = t1.filter(pl.col("feature") == "oes").row(0, named=True)
    # Table 2's edges are rounded to one decimal, so Table 1 is matched to that precision.
    assert oes["r2"] == pytest.approx(0.934, abs=0.002) and oes["p"] == pytest.approx(0.033, abs=0.001)
    assert oes["slope"] == pytest.approx(1.62, abs=0.01)
    left = t1.filter(pl.col("feature") == "left").row(0, named=True)
    assert left["r2"] == pytest.approx(0.786, abs=0.005) and left["slope"] == pytest.approx(-2.30, abs=0.01)
    assert t1.filter(pl.col("feature") == "entropy")["r2"].to_list() == [None]  # constant across models


def test_fewer_than_three_models_gives_no_regression() -> None:
    feats, tests = _frames()
    few = feats.filter(pl.col("model").is_in(["g25", "g20"]))
    assert feature_regressions(few, tests).height == 0


def test_variants_are_never_pooled() -> None:
    """Issue 21 item 7: two variants of the same models give two tables, each its own numbers."""
    a_feats, a_tests = _frames("default")
    b_feats, b_tests = _frames("costly_punishment", shift=10.0)
    feats, tests = pl.concat([a_feats, b_feats]), pl.concat([a_tests, b_tests])
    by_model = robustness_by_model(tests)
    assert by_model.height == 8 and set(by_model["n_tested"].to_list()) == {100}
    assert by_model.filter(pl.col("variant") == "costly_punishment").sort("model")["robustness"].to_list() == [97.0, 90.0, 72.0, 52.0]
    t2 = oes_decomposition(feats, tests)
    default = t2.filter(pl.col("variant") == "default")
    assert default["oes"].to_list() == pytest.approx([61.1, 51.0, 38.2, 35.1])
    assert default["robustness"].to_list() == pytest.approx([48.0, 28.0, 3.0, 10.0])
    assert t2.filter(pl.col("variant") == "costly_punishment")["oes"].to_list() == pytest.approx([71.1, 61.0, 48.2, 45.1])
    t1 = feature_regressions(feats, tests)
    assert sorted(set(t1["variant"].to_list())) == ["costly_punishment", "default"] and set(t1["n_models"].to_list()) == {4}
    oes = t1.filter((pl.col("feature") == "oes") & (pl.col("variant") == "default")).row(0, named=True)
    assert oes["r2"] == pytest.approx(0.934, abs=0.002)  # unchanged by the other variant's runs
