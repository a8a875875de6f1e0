"""Cross-run and cross-game means of the CoopEval tables with undefined values (issue 25 kind 7):
a NaN run is left out on purpose, the cell states ``n_valid`` next to ``n``, and the rendered
cell carries a mark with its caption note (before: a NaN run made the whole cell NaN, shown as
"–", or was dropped without a trace)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import settings as hsettings

from coopeval.studies.coopeval.tables.builder import build_tables, standard_error
from coopeval.studies.coopeval.tables.defaults import TableSettings
from coopeval.studies.coopeval.tables.render import render_latex, render_markdown
from tests.strategies import scores_with_faults
from tests.studies.coopeval.tables.test_tables_builder import GAMES, A, B, cell, metrics_frame, rows


def _runs(values: list[float]) -> pl.DataFrame:
    data = []
    for k, v in enumerate(values):
        data += rows(f"r{k + 1}", "NoMechanism", "PrisonersDilemma", "Mean", {A: v, B: 1.0})
    return metrics_frame(data)


@hsettings(max_examples=40, deadline=None)
@given(values=scores_with_faults(min_size=1, max_size=6, non_negative=False))
def test_per_game_cells_average_the_finite_runs_and_count_them(values: list[float]) -> None:
    t = build_tables(_runs(values), settings=TableSettings(n_bootstrap=0))
    a = cell(t.per_game, metric="Mean", agent=A)
    finite = [v for v in values if math.isfinite(v)]
    assert a["n"] == len(values) and a["n_valid"] == len(finite)
    if finite:
        assert a["mean"] == pytest.approx(float(np.mean(finite)))
        expected_se = standard_error(finite)
        assert (a["se"] is None) if expected_se is None else a["se"] == pytest.approx(expected_se)
    else:
        assert a["mean"] is None or math.isnan(a["mean"])
    assert cell(t.per_game, metric="Mean", agent=B)["n_valid"] == len(values)


def test_one_nan_run_is_left_out_and_marked() -> None:
    t = build_tables(_runs([1.0, math.nan, 3.0]), settings=TableSettings(n_bootstrap=0))
    a = cell(t.per_game, metric="Mean", agent=A)
    assert a["mean"] == 2.0 and a["n"] == 3 and a["n_valid"] == 2 and a["se"] == pytest.approx(1.0)
    md = render_markdown(t.per_game, "per_game")
    assert "2.000 ± 1.000 (2/3 runs)" in md and "(k/n runs) or (k/n games): the mean used k" in md
    assert r"2.000 $\pm$ 1.000 (2/3 runs)" in render_latex(t.per_game, "per_game")


def test_aggregate_leaves_out_a_game_whose_mean_is_undefined() -> None:
    data = []
    for game in GAMES:
        value = math.nan if game == "TrustGame" else {"PrisonersDilemma": 1.5, "PublicGoods": 1.5, "TravellersDilemma": 2.0}[game]
        data += rows("r1", "Repetition", game, "Mean", {A: value, B: 1.0})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0))
    a = cell(t.aggregate, metric="Mean", agent=A)
    # normalised: PD 1.5 → 0.5, PGG 1.5 → 1.0, TD 2.0 → 0.0 (tests/studies/coopeval/tables/test_tables_builder.py)
    assert a["n"] == 4 and a["n_valid"] == 3 and a["mean"] == pytest.approx(0.5)


def test_a_run_where_the_agent_has_no_value_counts_as_played() -> None:
    """Issue 36 item 4: A's match-ups failed in r2 (no value), r3 is NaN: its mean (1 + 5)/2 = 3
    used 2 of the 4 runs played, and the cell says so; B's is over all 4 and says nothing."""
    data = rows("r1", "NoMechanism", "PrisonersDilemma", "Mean", {A: 1.0, B: 1.0})
    data += rows("r2", "NoMechanism", "PrisonersDilemma", "Mean", {B: 1.0})
    data += rows("r3", "NoMechanism", "PrisonersDilemma", "Mean", {A: math.nan, B: 1.0})
    data += rows("r4", "NoMechanism", "PrisonersDilemma", "Mean", {A: 5.0, B: 1.0})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0))
    a = cell(t.per_game, metric="Mean", agent=A)
    assert (a["n"], a["n_valid"], a["mean"]) == (4, 2, 3.0)
    md = render_markdown(t.per_game, "per_game")
    assert "3.000 ± 2.000 (2/4 runs)" in md  # s.e. = std(1, 5; ddof 1)/√2 = 2.828/1.414 = 2
    assert "1.000 (" not in md  # B used every run


def test_an_aggregate_cell_over_fewer_games_says_how_many() -> None:
    data = []
    for game in GAMES:
        value = math.nan if game == "TrustGame" else 1.5
        data += rows("r1", "Repetition", game, "Mean", {A: value, B: 1.0})
    md = render_markdown(build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0)).aggregate, "aggregate")
    assert "(3/4 games)" in md and "(k/n runs) or (k/n games)" in md
