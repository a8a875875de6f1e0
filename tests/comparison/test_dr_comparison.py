"""Deviation-rating (DR rank) differences by the tables' bootstrap, on hand-computable tensors.

Two agents, C and D, in a two-player metagame with payoffs that do not vary between match-ups,
so every bootstrap resample of a replicate rebuilds the replicate's own tensor:

* a Prisoner's Dilemma replicate, T[C, C] = 3, T[C, D] = 0, T[D, C] = 5, T[D, D] = 1: D strictly
  dominates, the strictest CCE is the pure profile (D, D); deviating to D gains 0 and to C gains
  T[C, D] − T[D, D] = −1, so the ratings are D 0, C −1 and the DR ranks D 1, C 2;
* a Harmony replicate, T[C, C] = 3, T[C, D] = 2, T[D, C] = 1, T[D, D] = 0: C dominates, ratings
  C 0, D T[D, C] − T[C, C] = −2, ranks C 1, D 2.
"""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.comparison.multiplicity import adjust_p_values
from coopeval.core.schemas import conform
from coopeval.studies.coopeval.comparisons import all_pair_rows, compare_dr
from coopeval.studies.coopeval.tables.dr_bootstrap import DR_RESAMPLES
from coopeval.studies.coopeval.tables.metrics import compute_metrics, observations_by_cell

C, D = "bot/c", "bot/d"
PD = {(C, C): (3.0, 3.0), (C, D): (0.0, 5.0), (D, C): (5.0, 0.0), (D, D): (1.0, 1.0)}
HARMONY = {(C, C): (3.0, 3.0), (C, D): (2.0, 1.0), (D, C): (1.0, 2.0), (D, D): (0.0, 0.0)}


def _scores(replicates: dict[str, dict[tuple[str, str], tuple[float, float]]], copies: int = 2) -> pl.DataFrame:
    """A ``scores`` table: one NoMechanism / PrisonersDilemma cell per replicate, every ordered
    match-up played ``copies`` times."""
    rows = []
    for run, payoffs in replicates.items():
        for (first, second), (x, y) in payoffs.items():
            for copy in range(copies):
                matchup = f"{first}-{second}-{copy}"
                for seat, (agent, score) in enumerate(((first, x), (second, y))):
                    rows.append({"cell_id": f"cell-{run}", "source": "ours", "run": run, "mechanism": "NoMechanism",
                                 "game": "PrisonersDilemma", "matchup_id": matchup, "seat": seat, "agent": agent,
                                 "score": score, "status": "complete"})
    return conform("scores", pl.DataFrame(rows))


def _ranks(metrics: pl.DataFrame, run: str) -> dict[str, float]:
    rows = metrics.filter((pl.col("metric") == "DR_rank") & (pl.col("rule") == "strictest") & (pl.col("run") == run))
    return dict(zip(rows["agent"].to_list(), rows["value"].to_list(), strict=True))


def test_the_tables_ranks_are_the_hand_computed_ones() -> None:
    metrics = compute_metrics(_scores({"r1": PD, "r2": HARMONY}))
    assert _ranks(metrics, "r1") == {C: 2.0, D: 1.0}
    assert _ranks(metrics, "r2") == {C: 1.0, D: 2.0}


def test_a_constant_rank_gap_has_a_point_interval_and_the_smallest_p_value() -> None:
    scores = _scores({"r1": PD, "r2": PD})
    estimate = compare_dr(observations_by_cell(scores), compute_metrics(scores), C, D, n_resamples=200)
    # DR(C) − DR(D) = 2 − 1 in both replicates; every resample rebuilds the same tensors
    assert estimate.delta == 1.0
    assert estimate.ci_low == 1.0 and estimate.ci_high == 1.0
    # no resample reaches 0: p = 2 · (0 + 1) / (200 + 1) (the observed data counts as one resample)
    assert estimate.p_value == pytest.approx(2 / 201)
    # clusters: 2 replicates × 3 agent multisets {C, C}, {C, D}, {D, D}; pairs: the 2 cells
    assert estimate.n_clusters == 6 and estimate.n_pairs == 2
    assert "deviation ratings under rule strictest" in estimate.method


def test_replicates_with_opposite_ranks_give_the_resampling_spread() -> None:
    scores = _scores({"r1": PD, "r2": HARMONY})
    estimate = compare_dr(observations_by_cell(scores), compute_metrics(scores), C, D, n_resamples=200)
    # table values: DR(C) = (2 + 1)/2, DR(D) = (1 + 2)/2: Δ = 0. A resample draws 2 replicates
    # with replacement: (r1, r1) gives +1 (probability 1/4), (r2, r2) −1 (1/4), a mix 0 (1/2);
    # the 2.5 / 97.5 % percentiles are −1 and +1, and about 3/4 of the resamples are ≤ 0 and
    # ≥ 0, so the two-sided p-value is capped at 1.
    assert estimate.delta == 0.0
    assert estimate.ci_low == -1.0 and estimate.ci_high == 1.0
    assert estimate.p_value == 1.0


def test_all_pair_rows_add_dr_rows_when_a_rule_is_given() -> None:
    scores = _scores({"r1": PD, "r2": PD})
    metrics = compute_metrics(scores)
    assert {r["metric"] for r in all_pair_rows(scores, metrics)} == {"Mean", "Fitness"}
    rows = all_pair_rows(scores, metrics, dr_rule="strictest")
    dr = sorted((r for r in rows if r["metric"] == "DR"), key=lambda r: r["scope"])
    # the game's scope and the aggregate over the social dilemmas present (here PD alone: the same values)
    assert [r["scope"] for r in dr] == ["NoMechanism/All", "NoMechanism/PrisonersDilemma"]
    for row in dr:
        assert row["a"] == C and row["delta"] == 1.0
        # one pair in the family: Holm leaves p unchanged; the default 1 000 DR resamples give 2/1 001
        assert row["p_adjusted"] == pytest.approx(2 / 1001) and row["correction"] == "holm"


def test_the_default_resamples_can_separate_every_pair_of_four_agents_under_holm() -> None:
    # 4 agents: a family of 6 pairs. Each at the smallest p = 2/(B + 1) = 2/1 001; Holm multiplies
    # the smallest by 6, so every adjusted p is 12/1 001 ≈ 0.012 < 0.05 (with B = 200: 12/201 ≈ 0.06).
    assert DR_RESAMPLES == 1000
    smallest = 2 / (DR_RESAMPLES + 1)
    adjusted = adjust_p_values([smallest] * 6, "holm")
    assert adjusted == pytest.approx([12 / 1001] * 6)
    assert all(p is not None and p < 0.05 for p in adjusted)
    assert all(p is not None and p > 0.05 for p in adjust_p_values([2 / 201] * 6, "holm"))
