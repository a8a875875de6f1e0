"""The workflow's comparison rows, the comparisons tables and the rank tie groups of the
leaderboard tables (issue 23 items 2 and 3)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from coopeval.comparison.multiplicity import adjust_p_values
from coopeval.comparison.record import COMPARISONS_SCHEMA
from coopeval.core.schemas import conform
from coopeval.studies.coopeval.comparison_outputs import (
    comparison_tables_from_store,
    write_comparisons,
)
from coopeval.studies.coopeval.figures.core import (
    mean_fitness_chart,
    mean_fitness_frame,
    with_tie_groups,
)
from coopeval.studies.coopeval.tables.builder import csv_schema
from coopeval.studies.coopeval.tables.from_store import tables_from_store
from coopeval.studies.coopeval.tables.metrics import compute_metrics
from tests.comparison.bot_store import bot_metrics, bot_scores, table_mean, write_store

AC, AD = "bot/always-cooperate", "bot/always-defect"
SETTINGS = {"dr_rule": "strictest", "n_bootstrap": 0, "seed": 1, "steps": 1000, "lr": 0.1}


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    folder = tmp_path_factory.mktemp("parquet")
    scores = bot_scores()
    paths = {"scores": [], "metrics": []}  # type: dict[str, list[str]]
    for (cell,), part in scores.group_by(["cell_id"]):
        for name, frame in (("scores", part), ("metrics", compute_metrics(part))):
            path = folder / f"{cell}-{name}.parquet"
            frame.write_parquet(path)
            paths[name].append(str(path))
    return write_comparisons(paths["scores"], paths["metrics"], folder / "comparisons.parquet", steps=1000, lr=0.1,
                             dr_rule="strictest")


def test_every_pair_is_compared_with_the_tables_means(rows: pl.DataFrame) -> None:
    scope = rows.filter((pl.col("scope") == "Repetition/PrisonersDilemma") & (pl.col("metric") == "Mean"))
    assert scope.height == 6  # 4 agents: every pair once
    row = scope.filter((pl.col("a") == AC) & (pl.col("b") == AD)).row(0, named=True)
    scores = bot_scores()
    metrics = bot_metrics()
    cells = scores["cell_id"].unique().to_list()
    expected = (table_mean(metrics, AC, "Repetition", "PrisonersDilemma", cells)
                - table_mean(metrics, AD, "Repetition", "PrisonersDilemma", cells))
    assert row["delta"] == pytest.approx(expected, abs=1e-9)
    assert set(rows["correction"].to_list()) == {"holm"}
    # the family of a correction is one (scope, metric): its p_adjusted are Holm of its p-values
    assert scope["p_adjusted"].to_list() == pytest.approx(adjust_p_values(scope["p_value"].to_list(), "holm"))
    # the aggregate scope (normalised over the social dilemmas present) and Fitness are there
    assert {"NoMechanism/All", "Repetition/All"} <= set(rows["scope"].to_list())
    assert rows.filter(pl.col("metric") == "Fitness").height == 4 * 6


def test_tables_gain_tie_groups_and_keep_their_values(rows: pl.DataFrame, tmp_path: Path) -> None:
    scores = bot_scores()
    designs = conform("design_quality", pl.DataFrame(schema={"cell_id": pl.String()}))
    with_rows = write_store(tmp_path / "a.duckdb", scores, {"design_quality": designs, "comparisons": rows})
    without = write_store(tmp_path / "b.duckdb", scores, {"design_quality": designs})
    tables_from_store(with_rows, tmp_path / "a", **SETTINGS)  # type: ignore[arg-type]
    tables_from_store(without, tmp_path / "b", **SETTINGS)  # type: ignore[arg-type]
    a = pl.read_csv(tmp_path / "a" / "per_game.csv", schema=csv_schema("per_game"))
    b = pl.read_csv(tmp_path / "b" / "per_game.csv", schema=csv_schema("per_game"))
    assert a.drop("tie_group").equals(b.drop("tie_group"))  # values, ranks and intervals unchanged
    assert b["tie_group"].null_count() == b.height
    sub = a.filter((pl.col("mechanism") == "NoMechanism") & (pl.col("game") == "PrisonersDilemma")
                   & (pl.col("metric") == "Mean") & (pl.col("agent") != "LLM Average"))
    letters = dict(zip(sub["agent"].to_list(), sub["tie_group"].to_list(), strict=True))
    family = rows.filter((pl.col("scope") == "NoMechanism/PrisonersDilemma") & (pl.col("metric") == "Mean"))
    for pair in family.iter_rows(named=True):
        share = bool(set(letters[pair["a"]]) & set(letters[pair["b"]]))
        assert share == (pair["p_adjusted"] >= 0.05), pair
    best = sub.sort("rank")["agent"][0]
    assert "a" in letters[best]
    # the aggregate (normalised over the social dilemmas present) rows compare the aggregate table's values
    agg = pl.read_csv(tmp_path / "a" / "aggregate.csv", schema=csv_schema("aggregate"))
    value = {r["agent"]: r["mean"] for r in agg.filter((pl.col("mechanism") == "Repetition") & (pl.col("metric") == "Mean")).iter_rows(named=True)}
    row = rows.filter((pl.col("scope") == "Repetition/All") & (pl.col("a") == AC) & (pl.col("b") == AD)).row(0, named=True)
    assert row["delta"] == pytest.approx(value[AC] - value[AD], abs=1e-9)
    assert agg["tie_group"].drop_nulls().len() > 0
    md = (tmp_path / "a" / "per_game.md").read_text(encoding="utf-8")
    assert "<sup>" in md and "holm-corrected" in md
    assert r"\textsuperscript{" in (tmp_path / "a" / "per_game.tex").read_text(encoding="utf-8")
    assert "<sup>" not in (tmp_path / "b" / "per_game.md").read_text(encoding="utf-8")


def test_dr_rows_are_the_tables_rank_differences_and_letter_their_dr(rows: pl.DataFrame, tmp_path: Path) -> None:
    dr = rows.filter(pl.col("metric") == "DR")
    # every pair, per (mechanism, game) and over the games of the aggregate, each family Holm-corrected
    assert sorted(set(dr["scope"].to_list())) == sorted(f"{m}/{g}" for m in ("NoMechanism", "Repetition")
                                                       for g in ("PrisonersDilemma", "StagHunt", "All"))
    assert dr.group_by("scope").len()["len"].to_list() == [6] * 6
    for (_scope,), family in dr.group_by(["scope"]):
        assert family["p_adjusted"].to_list() == pytest.approx(adjust_p_values(family["p_value"].to_list(), "holm"))
    store = write_store(tmp_path / "a.duckdb", bot_scores(), {"design_quality": conform("design_quality", pl.DataFrame(schema={"cell_id": pl.String()})),
                                                              "comparisons": rows})
    tables_from_store(store, tmp_path / "t", **SETTINGS)  # type: ignore[arg-type]
    for kind in ("per_game", "aggregate"):
        table = pl.read_csv(tmp_path / "t" / f"{kind}.csv", schema=csv_schema(kind)).filter(pl.col("agent") != "LLM Average")
        for metric in ("DR", "DR_exact"):  # the rule is strictest: both are the compared ranks
            for (mech, game), sub in table.filter(pl.col("metric") == metric).group_by(["mechanism", "game"]):
                value = dict(zip(sub["agent"].to_list(), sub["mean"].to_list(), strict=True))
                letters = dict(zip(sub["agent"].to_list(), sub["tie_group"].to_list(), strict=True))
                family = dr.filter(pl.col("scope") == f"{mech}/{game}")
                assert family.height == 6
                for pair in family.iter_rows(named=True):
                    assert pair["delta"] == pytest.approx(value[pair["a"]] - value[pair["b"]], abs=1e-9)
                    assert bool(set(letters[pair["a"]]) & set(letters[pair["b"]])) == (pair["p_adjusted"] >= 0.05)


def test_dr_letters_need_the_compared_rule() -> None:
    from coopeval.studies.coopeval.tables.tie_groups import table_tie_groups

    group = ({"x", "y"}, {("x", "y")}, "holm")
    groups = {("M/G", "DR"): group, ("M/All", "DR"): group, ("M/G", "Mean"): group}
    assert table_tie_groups(groups, "strictest", {("M", "G"): "strictest"}, ["G"]) == {
        ("M/G", "DR"): group, ("M/G", "DR_exact"): group, ("M/All", "DR"): group, ("M/All", "DR_exact"): group, ("M/G", "Mean"): group}
    # released ratings in the table's DR: its letters would not be those of the compared ranks
    assert set(table_tie_groups(groups, "strictest", {("M", "G"): "released"}, ["G"])) == {("M/G", "DR_exact"), ("M/All", "DR_exact"), ("M/G", "Mean")}
    # another rule: DR_exact (strictest) is not what was compared
    assert set(table_tie_groups(groups, "reference-vertex", {("M", "G"): "reference-vertex"}, ["G", "H"])) == {
        ("M/G", "DR"), ("M/All", "DR"), ("M/G", "Mean")}
    assert set(table_tie_groups(groups, "reference-vertex", {("M", "G"): "reference-vertex", ("M", "H"): "released"}, ["G", "H"])) == {
        ("M/G", "DR"), ("M/G", "Mean")}


def test_comparison_tables_render_every_row_and_name_the_correction(rows: pl.DataFrame, tmp_path: Path) -> None:
    store = write_store(tmp_path / "s.duckdb", bot_scores(), {"comparisons": rows})
    files = comparison_tables_from_store(store, tmp_path / "t")
    assert sorted(p.name for p in files) == ["comparisons.csv", "comparisons.md", "comparisons.tex"]
    csv = pl.read_csv(tmp_path / "t" / "comparisons.csv", schema=COMPARISONS_SCHEMA)
    assert csv.height == rows.height and csv["correction"].to_list() == ["holm"] * rows.height
    md = (tmp_path / "t" / "comparisons.md").read_text(encoding="utf-8")
    assert "holm: Holm (1979)" in md and md.count("\n| coopeval |") == rows.height
    tex = (tmp_path / "t" / "comparisons.tex").read_text(encoding="utf-8")
    assert r"$\Delta$ = A $-$ B" in tex and "α" not in tex


def test_headline_figure_prints_the_tables_tie_groups(rows: pl.DataFrame) -> None:
    frame = with_tie_groups(mean_fitness_frame(bot_metrics()), rows)
    sub = frame.filter((pl.col("mechanism") == "NoMechanism") & (pl.col("game") == "PrisonersDilemma") & (pl.col("metric") == "Mean"))
    letters = dict(zip(sub["agent"].to_list(), sub["tie_group"].to_list(), strict=True))
    family = rows.filter((pl.col("scope") == "NoMechanism/PrisonersDilemma") & (pl.col("metric") == "Mean"))
    for pair in family.iter_rows(named=True):
        assert bool(set(letters[pair["a"]]) & set(letters[pair["b"]])) == (pair["p_adjusted"] >= 0.05)
    spec = mean_fitness_chart(frame).to_dict()
    assert [layer["mark"]["type"] for layer in spec["spec"]["layer"]] == ["bar", "text"]
    assert with_tie_groups(mean_fitness_frame(bot_metrics()), None)["tie_group"].null_count() == frame.height


def test_a_further_factor_splits_the_scopes() -> None:
    from coopeval.studies.coopeval.comparisons import all_pair_rows

    scores = bot_scores().filter((pl.col("mechanism") == "NoMechanism") & (pl.col("game") == "PrisonersDilemma"))
    runs = dict(scores.select("cell_id", "run").unique().iter_rows())
    rows = all_pair_rows(scores, factor={cell: f"p{run[-1]}" for cell, run in runs.items()})
    by_scope = {(r["scope"], r["a"], r["b"]): r for r in rows}
    assert {r["scope"] for r in rows} == {f"NoMechanism/{g}/p{k}" for g in ("PrisonersDilemma", "All") for k in (1, 2)}
    metrics = bot_metrics()
    for run in ("r1", "r2"):
        cells = [c for c, r in runs.items() if r == run]
        expected = (table_mean(metrics, AC, "NoMechanism", "PrisonersDilemma", cells)
                    - table_mean(metrics, AD, "NoMechanism", "PrisonersDilemma", cells))
        assert by_scope[(f"NoMechanism/PrisonersDilemma/p{run[-1]}", AC, AD)]["delta"] == pytest.approx(expected, abs=1e-9)
