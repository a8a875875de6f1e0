"""The CoopEval leaderboard shows the result tables' tie groups, read from the store's comparisons."""

from __future__ import annotations

import duckdb

from coopeval.explorer.overview import coopeval_board
from tests.explorer.fake_store import make_store


def _comparison(scope: str, metric: str, p_adjusted: float | None) -> dict[str, object]:
    return {"study": "coopeval", "scope": scope, "metric": metric, "a": "model-x", "b": "model-y", "p_adjusted": p_adjusted, "correction": "holm"}


def test_letters_follow_the_significant_pairs_of_each_scope(tmp_path) -> None:
    path = make_store(tmp_path / "coopeval.duckdb")
    con = duckdb.connect(str(path))
    try:
        rows = [
            _comparison("Repetition/prisoners_dilemma", "Mean", 0.01),  # significant: x (2.0) 'a', y (1.0) 'b'
            _comparison("Repetition/stag_hunt", "Mean", 0.40),  # not significant: both 'a'
            _comparison("Repetition/All", "Mean", None),  # fewer than 2 clusters: not significant
        ]
        con.execute("DELETE FROM comparisons")
        for r in rows:
            names = ", ".join(r)
            con.execute(f"INSERT INTO comparisons ({names}) VALUES ({', '.join('?' for _ in r)})", list(r.values()))
        tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        board = coopeval_board(con, tables)
    finally:
        con.close()
    got = {(r["game"], r["agent"]): (r["mean_group"], r["fitness_group"]) for r in board["rows"]}
    assert got == {
        ("prisoners_dilemma", "model-x"): ("a", None),
        ("prisoners_dilemma", "model-y"): ("b", None),
        ("stag_hunt", "model-x"): ("a", None),
        ("stag_hunt", "model-y"): ("a", None),
        # raw points over the games: a quantity the comparisons do not letter (issue 41 item 6)
        ("all games (raw points)", "model-x"): (None, None),
        ("all games (raw points)", "model-y"): (None, None),
    }
    assert [c["label"] for c in board["columns"]][-4:] == ["Mean group", "Fitness group", "DR group", "interval"]
    assert {r["dr_group"] for r in board["rows"]} == {None}  # no DR rows compared


def test_dr_letters_rank_by_the_rating_shown(tmp_path) -> None:
    """The DR comparisons letter the board's deviation ratings (higher is better): in the
    prisoner's dilemma model-y rates above model-x and the pair differs, so y is 'a', x 'b'."""
    path = make_store(tmp_path / "coopeval.duckdb")
    con = duckdb.connect(str(path))
    try:
        con.execute("DELETE FROM comparisons")
        for cell, game, agent, rating in (("cellA", "prisoners_dilemma", "model-x", -0.5), ("cellA", "prisoners_dilemma", "model-y", 0.0),
                                          ("cellC", "stag_hunt", "model-x", 0.0), ("cellC", "stag_hunt", "model-y", -1.0)):
            con.execute("INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES (?, 'ours', 'r1', 'Repetition', ?, ?, 'DR', ?)",
                        [cell, game, agent, rating])
        for r in (_comparison("Repetition/prisoners_dilemma", "DR", 0.001), _comparison("Repetition/stag_hunt", "DR", 0.2)):
            con.execute(f"INSERT INTO comparisons ({', '.join(r)}) VALUES ({', '.join('?' for _ in r)})", list(r.values()))
        tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        board = coopeval_board(con, tables)
    finally:
        con.close()
    got = {(r["game"], r["agent"]): (r["mean_group"], r["dr_group"]) for r in board["rows"]}
    assert got == {
        ("prisoners_dilemma", "model-x"): (None, "b"),
        ("prisoners_dilemma", "model-y"): (None, "a"),
        ("stag_hunt", "model-x"): (None, "a"),
        ("stag_hunt", "model-y"): (None, "a"),
        ("all games (raw points)", "model-x"): (None, None),
        ("all games (raw points)", "model-y"): (None, None),
    }


def test_a_store_without_comparisons_has_no_letters(tmp_path) -> None:
    path = make_store(tmp_path / "coopeval.duckdb", drop=["comparisons"])
    con = duckdb.connect(str(path))
    try:
        tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        board = coopeval_board(con, tables)
    finally:
        con.close()
    assert {(r["mean_group"], r["fitness_group"], r["dr_group"]) for r in board["rows"]} == {(None, None, None)}


def test_an_empty_comparisons_table_gives_no_letters(tmp_path) -> None:
    path = make_store(tmp_path / "coopeval.duckdb")
    con = duckdb.connect(str(path))
    try:
        con.execute("DELETE FROM comparisons")
        tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        board = coopeval_board(con, tables)
    finally:
        con.close()
    assert {(r["mean_group"], r["fitness_group"], r["dr_group"]) for r in board["rows"]} == {(None, None, None)}
