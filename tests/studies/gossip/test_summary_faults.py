"""NaN and out-of-domain values through the gossip aggregates (issue 25 kind 7): every mean
states how many values it used, negative returns and a Gini outside [0, 1] are columns and
table marks, never a silently printed number."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from coopeval.studies.gossip.metrics import RUN_METRICS, run_metrics
from coopeval.studies.gossip.summary import (
    GROUP,
    METRICS,
    paper_table,
    replicate_summary,
    to_latex,
    to_markdown,
)
from tests.strategies import scores_with_faults


def _gini_by_pairs(values: list[float]) -> float:
    """The docs/protocol/gossip.md#metrics formula written out as a double loop."""
    n, mu = len(values), sum(values) / len(values)
    return sum(abs(a - b) for a in values for b in values) / (2 * n * n * mu)


@hsettings(max_examples=200, deadline=None)
@given(returns=scores_with_faults(min_size=1, max_size=9, finite=True), coop=scores_with_faults(min_size=9, max_size=9))
def test_run_metrics_count_valid_agents_and_flag_out_of_domain_gini(returns: list[float], coop: list[float]) -> None:
    rows = [
        {"agent": f"a{i}", "cooperation_ratio": coop[i], "image_score": 0.0, "return": g, "reward_per_round": g,
         "discounted_return": g}
        for i, g in enumerate(returns)
    ]
    out = run_metrics(rows)
    assert out["n_valid_cooperation_ratio"] == sum(math.isfinite(c) for c in coop[: len(returns)])
    assert out["n_valid_discounted_return"] == len(returns)
    assert out["n_negative_returns"] == sum(g < 0 for g in returns)
    mu = sum(returns) / len(returns)
    if mu > 0:
        expected = _gini_by_pairs(returns)
        assert out["gini"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert out["gini_out_of_range"] == (not 0 <= out["gini"] <= 1)
        if all(g >= 0 for g in returns):
            assert out["gini_out_of_range"] is False  # non-negative returns keep the Gini below (n − 1)/n
    else:
        assert math.isnan(out["gini"]) and out["gini_out_of_range"] is False


def _run(model: str, replicate: int, values: dict[str, float]) -> dict[str, object]:
    row: dict[str, object] = {"testbed": "donation", "condition": "align", "model": model, "gamma": 0.9,
                              "horizon": "finite", "matching": "m", "replicate": replicate}
    for metric in METRICS:
        row[f"{metric}_mean"] = values.get(metric, 1.0)
        row[f"{metric}_se"] = 0.1
    row["gini"] = values.get("gini", 0.25)
    row["n_negative_returns"] = int(values.get("n_negative_returns", 0))
    row["gini_out_of_range"] = not 0 <= row["gini"] <= 1 if math.isfinite(row["gini"]) else False  # type: ignore[operator]
    return row


@hsettings(max_examples=150, deadline=None)
@given(coop=scores_with_faults(min_size=1, max_size=6), gini=st.lists(st.sampled_from([0.2, 0.5, math.nan, 3.6]), min_size=1, max_size=6))
def test_replicate_means_are_nan_aware_and_state_n_valid(coop: list[float], gini: list[float]) -> None:
    k = min(len(coop), len(gini))
    runs = pl.DataFrame([_run("m", r, {"cooperation_ratio": coop[r], "gini": gini[r]}) for r in range(k)])
    row = replicate_summary(runs).row(0, named=True)
    finite = [c for c in coop[:k] if math.isfinite(c)]
    assert row["n_replicates"] == k and row["n_valid_cooperation_ratio"] == len(finite)
    if finite:
        assert row["cooperation_ratio"] == pytest.approx(sum(finite) / len(finite))
    else:
        assert math.isnan(row["cooperation_ratio"])
    assert row["n_valid_gini"] == sum(math.isfinite(g) for g in gini[:k]) == k - row["gini_nan_runs"]
    assert row["gini_out_of_range_runs"] == sum(g == 3.6 for g in gini[:k])
    cell = paper_table(replicate_summary(runs)).row(0, named=True)
    assert ("‡" in cell["Gini"]) == (row["gini_out_of_range_runs"] > 0)
    assert cell["Cooperation"].endswith(f" ({len(finite)}/{k} runs)") == (len(finite) < k)
    assert cell["Gini"].endswith(f" ({row['n_valid_gini']}/{k} runs)") == (row["n_valid_gini"] < k)


def test_a_gini_of_negative_returns_is_marked_not_printed_plain() -> None:
    # G = (−10, −8, 20): μ = 2/3, Σ_i Σ_j |G_i − G_j| = 2·(2 + 30 + 28) = 120, Gini = 120 / (2·9·2/3) = 10.
    rows = [{"agent": a, "cooperation_ratio": 0.0, "image_score": 0.0, "return": g, "reward_per_round": g, "discounted_return": g}
            for a, g in (("a", -10.0), ("b", -8.0), ("c", 20.0))]
    run = run_metrics(rows)
    assert run["gini"] == pytest.approx(10.0) and run["gini_out_of_range"] is True and run["n_negative_returns"] == 2
    runs = pl.DataFrame([_run("m", 1, {"gini": run["gini"], "n_negative_returns": 2})])
    summary = replicate_summary(runs)
    assert summary["negative_return_runs"].to_list() == [1] and summary["gini_out_of_range_runs"].to_list() == [1]
    table = paper_table(summary)
    assert table["Gini"].to_list() == ["10.00‡"]
    assert "‡ Gini outside [0, 1]" in to_markdown(table)
    assert r"10.00$^\ddagger$" in to_latex(table)


def test_the_run_metric_columns_cover_every_metric() -> None:
    assert set(RUN_METRICS) == set(METRICS) and set(GROUP) <= set(_run("m", 1, {}))
