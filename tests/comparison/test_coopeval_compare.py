"""``coopeval compare`` on a store played by scripted bots (issue 23 "Done means")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from coopeval.cli import main
from coopeval.comparison.record import JSON_FIELDS
from coopeval.studies.coopeval.tables.metrics import compute_metrics
from tests.comparison.bot_store import bot_metrics, bot_scores, table_mean, write_store

AC, TFT, AD, RND = "bot/always-cooperate", "bot/tit-for-tat", "bot/always-defect", "bot/uniform-random"


def _compare(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, dict[str, object] | None, str]:
    code = main(["compare", str(store), "--study", "coopeval", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("store") / "coopeval.duckdb", bot_scores())


@pytest.mark.parametrize(("mechanism", "game"), [("Repetition", "PrisonersDilemma"), ("NoMechanism", "stag_hunt"),
                                                 (None, None), ("Repetition", None)])
@pytest.mark.parametrize(("a", "b"), [(AC, AD), (RND, TFT)])
def test_delta_is_the_difference_of_the_metrics_table_means(
    capsys: pytest.CaptureFixture[str], store: Path, mechanism: str | None, game: str | None, a: str, b: str
) -> None:
    args = ["--a", a, "--b", b] + (["--mechanism", mechanism] if mechanism else []) + (["--game", game] if game else [])
    code, result, err = _compare(capsys, store, *args)
    assert code == 0, err
    assert result is not None and tuple(result) == JSON_FIELDS
    scores = bot_scores()
    metrics = bot_metrics()
    game_type = {"stag_hunt": "StagHunt"}.get(game or "", game)
    cells = scores["cell_id"].unique().to_list()
    expected = table_mean(metrics, a, mechanism, game_type, cells) - table_mean(metrics, b, mechanism, game_type, cells)
    assert result["delta"] == pytest.approx(expected, abs=1e-9)
    assert result["ci_low"] <= result["delta"] <= result["ci_high"]  # type: ignore[operator]
    assert 0.0 <= result["p_value"] <= result["p_adjusted"] <= 1.0  # type: ignore[operator]
    assert result["correction"] == "holm" and result["metric"] == "Mean"
    # 2 replicates × co-player profiles (4 agents in 2-player games: 4 profiles) per selected cell
    n_cells = 2 * (1 if mechanism else 2) * (1 if game else 2)
    assert result["n_clusters"] == n_cells * 4


def test_identical_bots_compare_with_delta_zero_and_p_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # in a one-shot game tit-for-tat plays its opening move (cooperate) every time: it is always-cooperate
    scores = bot_scores(("NoMechanism",), ("prisoners_dilemma",), (AC.removeprefix("bot/"), TFT.removeprefix("bot/"),
                                                                    AD.removeprefix("bot/")), 2)
    store = write_store(tmp_path / "s.duckdb", scores)
    code, result, err = _compare(capsys, store, "--a", AC, "--b", TFT)
    assert code == 0, err
    assert result is not None
    assert result["delta"] == 0.0 and result["p_value"] == 1.0 and result["p_adjusted"] == 1.0
    assert result["ci_low"] == 0.0 and result["ci_high"] == 0.0
    # and the same bots against a defector differ: every cluster favours the defector
    code, result, err = _compare(capsys, store, "--a", AD, "--b", AC)
    assert result is not None and result["delta"] > 0 and result["ci_low"] > 0


def test_fewer_than_two_clusters_gives_null_intervals_with_a_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # the reputation format (one row per seated agent, no co-players recorded) of one replicate:
    # one cluster, the run
    scores = bot_scores().filter((pl.col("run") == "r1") & (pl.col("mechanism") == "NoMechanism")
                                 & (pl.col("game") == "PrisonersDilemma"))
    one_seat = scores.with_columns((pl.col("matchup_id") + "/" + pl.col("seat").cast(pl.String)).alias("matchup_id"),
                                   pl.lit(1, dtype=pl.Int64).alias("seat"))
    store = write_store(tmp_path / "s.duckdb", one_seat)
    code, result, err = _compare(capsys, store, "--a", AC, "--b", AD)
    assert code == 0, err
    assert result is not None
    metrics = compute_metrics(one_seat)
    cells = one_seat["cell_id"].unique().to_list()
    assert result["delta"] == pytest.approx(table_mean(metrics, AC, None, None, cells) - table_mean(metrics, AD, None, None, cells))
    assert result["n_clusters"] == 1
    assert result["ci_low"] is None and result["ci_high"] is None and result["p_value"] is None and result["mde"] is None
    assert result["p_adjusted"] is None
    assert "fewer than 2 clusters" in str(result["note"])


def _without(scores: pl.DataFrame, agent: str, mechanism: str) -> pl.DataFrame:
    """``scores`` less every match-up of ``agent`` in the cells of ``mechanism``."""
    seated = scores.filter((pl.col("agent") == agent) & (pl.col("mechanism") == mechanism)).select("cell_id", "matchup_id").unique()
    return scores.join(seated, on=["cell_id", "matchup_id"], how="anti")


def test_no_shared_data_reports_null_numbers_with_a_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # always-defect plays no Repetition cell; always-cooperate plays no NoMechanism cell
    scores = _without(_without(bot_scores(), AD, "Repetition"), AC, "NoMechanism")
    store = write_store(tmp_path / "s.duckdb", scores)
    cases = [(["--a", AC, "--b", AD, "--mechanism", "Repetition"], f"{AD} plays no cell of the selection Repetition/*"),
             (["--a", AD, "--b", AC, "--mechanism", "Repetition", "--metric", "Fitness"], f"{AD} plays no cell"),
             (["--a", AC, "--b", AD], f"{AC} and {AD} never sit in the same cell of the selection */*"),
             (["--a", AD, "--b", AC, "--metric", "DR"], "never sit in the same cell")]
    for args, reason in cases:
        code, result, err = _compare(capsys, store, *args)
        assert code == 0, err
        assert result is not None and tuple(result) == JSON_FIELDS and result["a"] == args[1]
        for key in ("delta", "ci_low", "ci_high", "p_value", "p_adjusted", "mde"):
            assert result[key] is None, key
        assert result["n_pairs"] == 0 and result["n_clusters"] == 0
        assert "no shared data" in str(result["note"]) and reason in str(result["note"])
    # the other pairs of the selection still compare
    code, result, err = _compare(capsys, store, "--a", TFT, "--b", AD, "--mechanism", "NoMechanism")
    assert code == 0 and result is not None and result["delta"] is not None and result["ci_low"] is not None


def test_a_pooled_comparison_names_the_groups_it_leaves_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """always-defect plays no Repetition cell: A vs B with every mechanism pooled equals the
    NoMechanism-only comparison, and the note says so (it did not before)."""
    store = write_store(tmp_path / "s.duckdb", _without(bot_scores(), AD, "Repetition"))
    code, pooled, err = _compare(capsys, store, "--a", TFT, "--b", AD)
    assert code == 0 and pooled is not None, err
    code, only, err = _compare(capsys, store, "--a", TFT, "--b", AD, "--mechanism", "NoMechanism")
    assert code == 0 and only is not None, err
    assert pooled["delta"] == only["delta"] and pooled["n_pairs"] == only["n_pairs"]
    assert str(pooled["note"]).startswith("pooled over the 2 of 4 mechanism × game groups of the selection where both play (mechanisms: NoMechanism)")
    assert only["note"] is None
    code, full, err = _compare(capsys, store, "--a", TFT, "--b", AC)  # both play everywhere
    assert code == 0 and full is not None and full["note"] is None


def test_dr_comparison_is_the_difference_of_the_tables_dr_ranks(capsys: pytest.CaptureFixture[str], store: Path) -> None:
    code, result, err = _compare(capsys, store, "--a", RND, "--b", AD, "--metric", "DR", "--mechanism", "NoMechanism",
                                 "--game", "prisoners_dilemma")
    assert code == 0, err
    assert result is not None and result["metric"] == "DR"
    ranks = bot_metrics().filter((pl.col("metric") == "DR_rank") & (pl.col("rule") == "strictest")
                                 & (pl.col("mechanism") == "NoMechanism") & (pl.col("game") == "PrisonersDilemma"))
    by_agent = {a: float(ranks.filter(pl.col("agent") == a)["value"].mean()) for a in (RND, AD)}  # type: ignore[arg-type]
    assert result["delta"] == pytest.approx(by_agent[RND] - by_agent[AD], abs=1e-9)
    assert result["ci_low"] <= result["delta"] <= result["ci_high"]  # type: ignore[operator]
    assert 2 / 1001 <= result["p_value"] <= result["p_adjusted"] <= 1.0  # type: ignore[operator]
    assert "deviation ratings under rule strictest" in str(result["method"])
    code, _, err = _compare(capsys, store, "--a", RND, "--b", AD, "--metric", "DR", "--dr-rule", "loosest")
    assert code == 2 and "loosest" in err and "strictest" in err


@pytest.mark.parametrize(("flag", "value", "listed"), [("--a", "bot/nobody", AC), ("--b", "bot/nobody", TFT),
                                                       ("--metric", "Median", "Fitness"), ("--metric", "Median", "DR"),
                                                       ("--game", "chess", "PrisonersDilemma")])
def test_unknown_names_are_refused_with_the_valid_ones(
    capsys: pytest.CaptureFixture[str], store: Path, flag: str, value: str, listed: str
) -> None:
    args = {"--a": AC, "--b": AD, flag: value}
    code, _, err = _compare(capsys, store, *[x for k, v in args.items() for x in (k, v)])
    assert code == 2
    assert value in err and listed in err


def test_fitness_comparison_uses_the_metrics_table(capsys: pytest.CaptureFixture[str], store: Path) -> None:
    code, result, err = _compare(capsys, store, "--a", AD, "--b", AC, "--metric", "Fitness", "--mechanism", "NoMechanism",
                                 "--game", "PrisonersDilemma", "--correction", "bh")
    assert code == 0, err
    assert result is not None and result["correction"] == "bh"
    metrics = bot_metrics().filter((pl.col("metric") == "Fitness") & (pl.col("mechanism") == "NoMechanism")
                                                   & (pl.col("game") == "PrisonersDilemma"))
    by_agent = {a: float(metrics.filter(pl.col("agent") == a)["value"].mean()) for a in (AD, AC)}  # type: ignore[arg-type]
    assert result["delta"] == pytest.approx(by_agent[AD] - by_agent[AC], abs=1e-9)
    assert result["ci_low"] <= result["delta"] <= result["ci_high"]  # type: ignore[operator]
    assert not any(isinstance(v, float) and math.isnan(v) for v in result.values())


def test_fitness_without_a_complete_tensor_reports_null_interval_with_a_reason() -> None:
    from coopeval.studies.coopeval.comparisons import all_pair_rows, compare_fitness, select_cells
    from coopeval.studies.coopeval.tables.metrics import observations_by_cell

    scores = bot_scores().filter((pl.col("mechanism") == "NoMechanism") & (pl.col("game") == "PrisonersDilemma"))
    # replicate r2 lost the (always-defect, always-defect) match-up: its tensor has an empty cell
    lost = scores.filter((pl.col("run") == "r2") & (pl.col("agent") == AD)).group_by("matchup_id").len().filter(pl.col("len") == 2)
    broken = scores.filter(~((pl.col("run") == "r2") & pl.col("matchup_id").is_in(lost["matchup_id"].to_list())))
    cells = select_cells(observations_by_cell(broken))
    estimate = compare_fitness(cells, bot_metrics(), AD, AC)
    assert estimate.ci_low is None and estimate.p_value is None and "no Fitness bootstrap" in str(estimate.note)
    rows = all_pair_rows(broken, bot_metrics())
    assert {r["metric"] for r in rows} == {"Mean", "Fitness"}
    assert all(r["p_adjusted"] is None for r in rows if r["metric"] == "Fitness")


def test_a_missing_store_or_the_same_agent_twice_is_refused(capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path) -> None:
    code, _, err = _compare(capsys, tmp_path / "none.duckdb", "--a", AC, "--b", AD)
    assert code == 2 and "is not a file" in err
    code, _, err = _compare(capsys, store, "--a", AC, "--b", AC)
    assert code == 2 and "compare two different agents" in err


def test_a_file_that_is_no_store_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import duckdb

    text = tmp_path / "text.duckdb"
    text.write_text("not a database")
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    for path, reason in ((text, "not a valid DuckDB"), (empty, "scores does not exist")):
        code = main(["compare", str(path), "--study", "coopeval", "--a", "x", "--b", "y"])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and reason in err and "STORE" in err


def test_metric_names_match_whatever_their_case(capsys: pytest.CaptureFixture[str], store: Path) -> None:
    """``--metric mean`` is the Mean: the same row as ``--metric Mean``, labelled ``Mean``."""
    code, exact, err = _compare(capsys, store, "--a", AC, "--b", AD, "--metric", "Mean")
    assert code == 0, err
    code, lower, err = _compare(capsys, store, "--a", AC, "--b", AD, "--metric", "mean")
    assert code == 0, err
    assert lower == exact and lower is not None and lower["metric"] == "Mean"
    code, _, err = _compare(capsys, store, "--a", AC, "--b", AD, "--metric", "median")
    assert code == 2 and "--metric: unknown 'median'; valid names: DR, Fitness, Mean" in err
