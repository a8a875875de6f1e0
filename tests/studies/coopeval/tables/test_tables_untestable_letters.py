"""The result tables' tie letters follow the evidence rule of the model-against-model page
(:func:`coopeval.comparison.evidence.verdict`, issue 47): a sub-table whose comparisons cannot be
read as significant or not (one replicate with a zero-width interval, or too few clusters for the
exact sign-flip test to reach 5 %) says "not testable (…)" instead of giving every agent "a"."""

from __future__ import annotations

import polars as pl

from coopeval.studies.coopeval.tables.builder import build_tables
from coopeval.studies.coopeval.tables.defaults import TableSettings
from coopeval.studies.coopeval.tables.render import render_markdown
from tests.studies.coopeval.tables.test_tables_builder import A, B, cell, metrics_frame, rows

PD, SH = "PrisonersDilemma", "PublicGoods"


def _comparison(scope: str, n_clusters: int, low: float, high: float, p: float) -> dict[str, object]:
    return {"study": "coopeval", "scope": scope, "metric": "Mean", "a": A, "b": B, "n_clusters": n_clusters,
            "ci_low": low, "ci_high": high, "p_value": p, "p_adjusted": p, "correction": "holm"}


def _tables(runs: int, comparison: dict[str, object]) -> pl.DataFrame:
    data = []
    for k in range(runs):
        data += rows(f"r{k + 1}", "NoMechanism", PD, "Mean", {A: 2.0 + k, B: 1.0})
    return build_tables(metrics_frame(data), comparisons=pl.DataFrame([comparison]), settings=TableSettings(n_bootstrap=0))


def test_one_replicate_with_a_zero_width_interval_is_not_testable() -> None:
    # 10 clusters could reach p = 2/2^10 ≈ 0.002, but every cluster gives Δ = 1 from one replicate
    # (stable under resampling): before, p = 0.002 < 0.05 lettered A "a" and B "b"
    t = _tables(1, _comparison(f"NoMechanism/{PD}", 10, 1.0, 1.0, 0.002))
    per_game = t.per_game
    assert cell(per_game, metric="Mean", agent=A)["tie_group"] == "not testable (1 replicate)"
    assert cell(per_game, metric="Mean", agent=B)["tie_group"] == "not testable (1 replicate)"
    md = render_markdown(per_game, "per_game", t.notes)
    assert "<sup>n.t.</sup>" in md and "n.t.: not testable (1 replicate): at one replicate" in md


def test_too_few_clusters_is_not_testable_even_over_replicates() -> None:
    # 4 clusters: the smallest p the sign-flip test can give is 2/2^4 = 0.125 > 0.05 (before: one group "a")
    t = _tables(3, _comparison(f"NoMechanism/{PD}", 4, 0.5, 1.5, 0.125))
    assert cell(t.per_game, metric="Mean", agent=A)["tie_group"] == "not testable (n = 4 clusters)"
    # a testable family keeps its letters: 10 clusters over 3 replicates, interval of width 1, p = 0.002 < 0.05: two groups
    t = _tables(3, _comparison(f"NoMechanism/{PD}", 10, 0.5, 1.5, 0.002))
    assert (cell(t.per_game, metric="Mean", agent=A)["tie_group"], cell(t.per_game, metric="Mean", agent=B)["tie_group"]) == ("a", "b")
    # and not significant: one group, a real finding at this size
    t = _tables(3, _comparison(f"NoMechanism/{PD}", 10, -0.5, 1.5, 0.4))
    assert (cell(t.per_game, metric="Mean", agent=A)["tie_group"], cell(t.per_game, metric="Mean", agent=B)["tie_group"]) == ("a", "a")
