"""Public Goods at every N in the result tables (issue 41 item 9): the variants that change only
``game_params.public_goods.players`` (``config/public_goods_n.yaml``'s n5, n8) get their own
per-game rows (column ``players``); N = 8's roster sample is not a cover, so its Fitness and DR
rows are blank with the cell's note; ablation and prompt variants stay out; the aggregate keeps
the default cells.

The store is built here: bots that always contribute (C) or always keep (D) in Public Goods
(multiplier 1.5, endowment 1: a contributor earns 1.5·k/N, a keeper 1 + 1.5·k/N with k
contributors; docs/protocol/games.md#public-goods), scored per seat, evaluated by the evaluate
stage; the expected Means are recomputed from the ``scores`` table with SQL."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from coopeval.core.schemas import conform
from coopeval.explorer.aggregate import read_result_table
from coopeval.studies.coopeval.evaluate import evaluate_cell
from coopeval.studies.coopeval.tables.builder import csv_schema
from coopeval.studies.coopeval.tables.from_store import tables_from_store
from coopeval.studies.coopeval.tables.group_sizes import table_cell_sets
from tests.comparison.bot_store import write_tables

C, D = "bot/always-cooperate", "bot/always-defect"
LLM = "LLM Average"
REPETITION = json.dumps({"discount": 0.8, "lookup_depth": 3, "num_rounds": 5}, separators=(",", ":"))
ABLATION = json.dumps({"discount": 0.7, "lookup_depth": 3, "num_rounds": 5}, separators=(",", ":"))
SAMPLE_8 = [(C,) * 8, (C,) * 4 + (D,) * 4, (D,) * 8]  # not a cover: most co-player multisets unplayed
# cell_id → (mechanism, manifest variant, mechanism_params, players, rosters)
CELLS = {
    "nm3": ("NoMechanism", "default", "{}", 3, list(itertools.product((C, D), repeat=3))),
    "nm5": ("NoMechanism", "n5", "{}", 5, list(itertools.product((C, D), repeat=5))),
    "nm8": ("NoMechanism", "n8", "{}", 8, SAMPLE_8),
    "nm5p": ("NoMechanism", "n5@p1", "{}", 5, list(itertools.product((D, C), repeat=5))),  # prompt variant: out
    "re3": ("Repetition", "default", REPETITION, 3, list(itertools.product((D, C), repeat=3))),
    "re5a": ("Repetition", "d07", ABLATION, 5, list(itertools.product((C, D), repeat=5))),  # ablation: out
}
DEFAULT_IDS = ("nm3", "re3")


def _payoff(seats: tuple[str, ...], seat: int) -> float:
    k = sum(agent == C for agent in seats)
    return 1.5 * k / len(seats) + (0.0 if seats[seat] == C else 1.0)


def _store(path: Path, ids: tuple[str, ...]) -> Path:
    """A store with the cells ``ids`` of :data:`CELLS` (one replicate each)."""
    manifest, scores, metrics = [], [], []
    for cell_id in ids:
        mechanism, variant, params, players, played = CELLS[cell_id]
        manifest.append({"cell_id": cell_id, "mechanism": mechanism, "variant": variant, "game": "public_goods",
                         "replicate": 1, "mechanism_params": params, "agents": f"{C},{D}", "players": players})
        key = {"cell_id": cell_id, "source": "ours", "run": "r1", "mechanism": mechanism, "game": "PublicGoods"}
        rows = [{**key, "matchup_id": f"m{i}", "seat": seat, "agent": agent, "score": _payoff(seats, seat), "status": "complete"}
                for i, seats in enumerate(played) for seat, agent in enumerate(seats)]
        cell_scores = conform("scores", pl.DataFrame(rows))
        matchups = pl.DataFrame({"matchup_id": [f"m{i}" for i in range(len(played))], "status": ["complete"] * len(played)})
        scores.append(cell_scores)
        metrics.append(evaluate_cell(cell_scores, matchups, key)[0])
    tables = {
        "cells": pl.DataFrame(manifest),
        "scores": pl.concat(scores),
        "metrics": pl.concat(metrics),
        "design_quality": conform("design_quality", pl.DataFrame(schema={"cell_id": pl.String()})),
    }
    return write_tables(path, tables)


def _tables(store: Path, out: Path) -> tuple[pl.DataFrame, Path]:
    tables_from_store(store, out, dr_rule="strictest", n_bootstrap=20, seed=3, steps=1000, lr=0.1)
    return pl.read_csv(out / "per_game.csv", schema=csv_schema("per_game")), out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame, Path]:
    root = tmp_path_factory.mktemp("group_sizes")
    store = _store(root / "store.duckdb", tuple(CELLS))
    per_game, out = _tables(store, root / "tables")
    return store, per_game, out


def test_every_n_has_its_own_rows_with_the_store_means(built: tuple[Path, pl.DataFrame, Path]) -> None:
    store, per_game, _ = built
    means = per_game.filter(pl.col("metric") == "Mean")
    assert set(means.select("mechanism", "players").unique().iter_rows()) == {
        ("NoMechanism", 3), ("NoMechanism", 5), ("NoMechanism", 8), ("Repetition", 3)}  # no ablation, no prompt variant
    con = duckdb.connect(str(store), read_only=True)
    expected = {
        (m, n, a): v
        for m, n, a, v in con.execute(
            "SELECT c.mechanism, c.players, s.agent, avg(s.score) FROM scores s JOIN cells c USING (cell_id)"
            " WHERE c.variant IN ('default', 'n5', 'n8') GROUP BY ALL"
        ).fetchall()
    }
    con.close()
    got = {(m, n, a): v for m, n, a, v in means.filter(pl.col("agent") != LLM).select("mechanism", "players", "agent", "mean").iter_rows()}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    # N = 5 over all 32 rosters: a contributor meets k − 1 ~ Bin(4, 1/2) other contributors
    assert got[("NoMechanism", 5, C)] == pytest.approx(1.5 * (1 + 2) / 5)
    assert got[("NoMechanism", 5, D)] == pytest.approx(1 + 1.5 * 2 / 5)
    assert means.filter(pl.col("agent") == LLM).height == 0  # two bots, no LLM agent: no LLM Average (issue 47)
    assert means["note"].null_count() == means.height


def test_n5_has_fitness_and_dr_and_n8_blank_rows_say_why(built: tuple[Path, pl.DataFrame, Path]) -> None:
    _, per_game, out = built
    at = {n: per_game.filter((pl.col("mechanism") == "NoMechanism") & (pl.col("players") == n)) for n in (5, 8)}
    fitness5 = dict(at[5].filter(pl.col("metric") == "Fitness").select("agent", "mean").iter_rows())
    assert fitness5[D] == pytest.approx(1.0, abs=1e-3) and fitness5[C] < fitness5[D]  # keeping dominates: all-keep NE, payoff 1
    assert dict(at[5].filter(pl.col("metric") == "DR").select("agent", "mean").iter_rows()) == {D: 1.0, C: 2.0}
    blank = at[8].filter(pl.col("metric") != "Mean")
    assert set(blank["metric"]) == {"Fitness", "DR", "DR_exact"}
    assert sorted(blank.filter(pl.col("metric") == "Fitness")["agent"].to_list()) == sorted([C, D])
    assert blank["mean"].null_count() == blank["rank"].null_count() == blank.height
    assert all(n.startswith("TensorIncomplete: ") and "does not cover every co-player multiset" in n for n in blank["note"])
    md = (out / "per_game.md").read_text(encoding="utf-8")
    assert "## Public Goods (N = 3)" in md and "## Public Goods (N = 5)" in md and "## Public Goods (N = 8)" in md
    section8 = md.split("## Public Goods (N = 8)")[1]
    assert "–: not defined under NoMechanism: the payoff tensor has an empty cell" in section8
    assert "| NoMechanism | – | – |\n" in section8
    assert "Public Goods (N = 8)" in (out / "per_game.tex").read_text(encoding="utf-8")
    assert "Public Goods at N = 5, 8; they do not enter this aggregate" in (out / "aggregate.md").read_text(encoding="utf-8")


def test_the_default_cells_tables_do_not_change(built: tuple[Path, pl.DataFrame, Path], tmp_path: Path) -> None:
    _, per_game, out = built
    alone, alone_out = _tables(_store(tmp_path / "default.duckdb", DEFAULT_IDS), tmp_path / "tables")
    assert (out / "aggregate.csv").read_text() == (alone_out / "aggregate.csv").read_text()
    assert set(pl.read_csv(out / "aggregate.csv")["mechanism"]) == {"NoMechanism", "Repetition"}
    assert per_game.filter(pl.col("players") == 3).equals(alone)
    assert "(N = " not in (alone_out / "per_game.md").read_text(encoding="utf-8")  # one N: the paper's "Public Goods"


def test_the_explorer_reads_the_default_cells_rows(built: tuple[Path, pl.DataFrame, Path]) -> None:
    _, per_game, out = built
    rows = read_result_table(out / "per_game.csv")
    default = per_game.filter((pl.col("players") == 3) & (pl.col("metric") == "Mean") & (pl.col("mechanism") == "NoMechanism"))
    for agent, mean in default.select("agent", "mean").iter_rows():
        assert rows[("NoMechanism", "PublicGoods", agent)]["mean"] == mean


def test_two_variants_at_one_n_are_refused() -> None:
    cells = pl.DataFrame({
        "cell_id": ["a", "b", "c"], "mechanism": ["NoMechanism"] * 3, "variant": ["default", "n5", "five"],
        "game": ["public_goods"] * 3, "mechanism_params": ["{}"] * 3, "players": [3, 5, 5],
    })
    with pytest.raises(ValueError, match=r"'n5' and 'five' both play NoMechanism public_goods with players 5"):
        table_cell_sets(cells)
    default, others = table_cell_sets(cells.head(2))
    assert default.cell_ids == ("a",) and default.players == {("NoMechanism", "PublicGoods"): 3}
    assert [(o.cell_ids, o.players) for o in others] == [(("b",), {("NoMechanism", "PublicGoods"): 5})]
