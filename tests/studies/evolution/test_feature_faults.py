"""Undefined and out-of-domain strategy-matrix features through the model means and the Table 1
regressions (issue 25 kind 7): one all-zero strategy (entropy NaN) or one with only constant rows
(monotonicity NaN) must not make its model's mean NaN, and the count used is stated."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from scipy import stats

from coopeval.studies.evolution.matrix import matrix_entropy, matrix_features, rho_mono
from coopeval.studies.evolution.robustness import feature_regressions, model_feature_means
from tests.strategies import matrices_with_faults, scores_with_faults


def _row(model: str, m: np.ndarray) -> dict[str, object]:
    return {"protocol": "horibe", "variant": "default", "model": model, "generation": 3, "strategy_id": "s",
            "n_failed_cells": 0, **matrix_features(m).as_row()}


def _finite_mean(values: list[float]) -> float | None:
    kept = [v for v in values if math.isfinite(v)]
    return sum(kept) / len(kept) if kept else None


@hsettings(max_examples=60, deadline=None)
@given(st.lists(matrices_with_faults(), min_size=1, max_size=6))
def test_model_means_leave_undefined_features_out_and_count_them(matrices: list[np.ndarray]) -> None:
    usable = []
    for m in matrices:
        if np.isnan(m).any() or (m < 0).any():
            with pytest.raises(ValueError, match=r"missing cells|percentages in \[0, 100\]"):
                matrix_features(m)
        else:
            usable.append(m)
    if not usable:
        return
    means = model_feature_means(pl.DataFrame([_row("x", m) for m in usable])).row(0, named=True)
    entropies = [matrix_entropy(m) for m in usable]
    rhos = [rho_mono(m)[0] for m in usable]
    assert means["n_agents"] == len(usable)
    assert means["n_valid_entropy"] == sum(math.isfinite(v) for v in entropies)
    assert means["n_valid_rho_mono"] == sum(math.isfinite(v) for v in rhos)
    for column, values in (("entropy", entropies), ("rho_mono", rhos)):
        expected = _finite_mean(values)
        if expected is None:
            assert means[column] is None
        else:
            assert means[column] == pytest.approx(expected, rel=1e-12)
    assert means["mean_cooperation"] == pytest.approx(sum(float(m.mean()) for m in usable) / len(usable))


def test_one_all_zero_strategy_no_longer_poisons_its_models_entropy() -> None:
    ramp = np.tile(np.arange(11.0) * 10, (11, 1))  # donation rises with x_A: entropy and ρ defined
    rows = [_row("a", ramp), _row("a", np.zeros((11, 11)))]
    means = model_feature_means(pl.DataFrame(rows)).row(0, named=True)
    assert means["entropy"] == pytest.approx(matrix_entropy(ramp)) and means["n_valid_entropy"] == 1
    assert means["rho_mono"] == pytest.approx(1.0) and means["n_valid_rho_mono"] == 1 and means["n_agents"] == 2


def test_regressions_use_the_models_whose_mean_is_defined() -> None:
    """Four models; model d's only strategy is all-zero, so its entropy mean is undefined: the
    entropy regression is fitted over a, b, c (n_valid = 3), OES over all four."""
    feats, tests = [], []
    robust = {"a": 10, "b": 30, "c": 45, "d": 80}
    for k, model in enumerate("abc"):
        m = np.tile(np.arange(11.0) * (2 + 3 * k), (11, 1))
        m[0, :] = 5.0 + k  # a constant row
        feats.append(_row(model, m))
    feats.append(_row("d", np.zeros((11, 11))))
    for model, n in robust.items():
        tests += [{"protocol": "horibe", "variant": "default", "model": model, "generation": 3, "robust": i < n} for i in range(100)]
    t1 = feature_regressions(pl.DataFrame(feats), pl.DataFrame(tests))
    entropy = t1.filter(pl.col("feature") == "entropy").row(0, named=True)
    xs = [r["entropy"] for r in feats[:3]]
    fit = stats.linregress(xs, [10.0, 30.0, 45.0])
    assert entropy["n_models"] == 4 and entropy["n_valid"] == 3
    assert entropy["r2"] == pytest.approx(fit.rvalue**2) and entropy["slope"] == pytest.approx(fit.slope)
    oes = t1.filter(pl.col("feature") == "oes").row(0, named=True)
    assert oes["n_valid"] == 4 and oes["r2"] is not None and math.isfinite(oes["r2"])


def test_out_of_domain_matrix_cells_are_refused_naming_the_cell() -> None:
    m = np.full((11, 11), 50.0)
    m[2, 7] = 130.0
    with pytest.raises(ValueError, match=r"cell \(i=2, j=7\) is 130.0"):
        matrix_features(m)


@hsettings(max_examples=100, deadline=None)
@given(values=scores_with_faults(min_size=1, max_size=8, non_negative=False))
def test_generation_means_over_runs_are_nan_aware_and_count_the_runs(values: list[float]) -> None:
    from coopeval.studies.evolution.summaries import generation_metrics

    rows = [
        {"protocol": "vh", "model": "m", "variant": "default", "generation": 1, "mean_final": v,
         "donation_fraction": 0.5, "punish_frequency": 0.0, "refuse_frequency": 0.0}
        for v in values
    ]
    out = generation_metrics(pl.DataFrame(rows)).row(0, named=True)
    nan_free = [v for v in values if not math.isnan(v)]
    assert out["n_runs"] == len(values) and out["n_valid_mean_final"] == len(nan_free)
    assert out["n_valid_donation_fraction"] == len(values) and out["donation_fraction"] == 0.5
    if not nan_free:
        assert out["mean_final"] is None
    elif all(math.isfinite(v) for v in nan_free):
        assert out["mean_final"] == pytest.approx(sum(nan_free) / len(nan_free))


def test_the_oes_table_says_how_many_strategies_its_means_used() -> None:
    """Issue 36 item 4: of model a's three strategies at generation 3, one has a failed matrix
    cell (no features): the edges and OES are means over the other two, and the table says 2 of 3."""
    from coopeval.studies.evolution.figures import oes_page
    from coopeval.studies.evolution.robustness import oes_decomposition

    ramp = np.tile(np.arange(11.0) * 10, (11, 1))
    rows = [_row("a", ramp), _row("a", np.full((11, 11), 50.0)), {**_row("a", ramp), "n_failed_cells": 1}]
    tests = pl.DataFrame([{"protocol": "horibe", "variant": "default", "model": "a", "generation": 3, "robust": k < 3} for k in range(4)])
    table = oes_decomposition(pl.DataFrame(rows), tests).row(0, named=True)
    assert (table["n_agents"], table["n_analysed"], table["n_tested"]) == (2, 3, 4)
    assert table["robustness"] == 75.0
    assert "<th>n_agents</th><th>n_analysed</th>" in oes_page(pl.DataFrame(rows), tests)
