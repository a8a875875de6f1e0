"""Nothing changes silently (issue 47 item 2) and the charts tell every series apart (item 3): what
the site's data says, against hand-computed values and SQL on the fake store of
:mod:`tests.explorer.fake_store` (cellA: Repetition on prisoners_dilemma, Mean model-x 2.0 and
model-y 1.0; cellC: stag_hunt, 4.0 and 1.0; one replicate each)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb

from coopeval.cli import main
from coopeval.explorer import build_site
from coopeval.explorer.charts import chart_kinds, gossip_charts
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE
from tests.explorer.fake_store import make_store, read_data

PER_GAME_CSV = """mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group,players,note
Repetition,prisoners_dilemma,Mean,model-x,2.0,,1,1.5,2.5,a,,
Repetition,prisoners_dilemma,Mean,model-y,1.0,,2,0.5,1.5,b,,
"""
AGGREGATE_CSV = """mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group
Repetition,All,Mean,model-x,0.25,0.05,2,0.1,0.4,b
Repetition,All,Mean,model-y,0.9,0.1,1,0.7,1.05,a
"""
AGGREGATE = "social dilemmas (normalised)"


def _run(root: Path) -> Path:
    store = make_store(root / "coopeval.duckdb")
    (root / "tables").mkdir()
    (root / "tables" / "per_game.csv").write_text(PER_GAME_CSV, encoding="utf-8")
    (root / "tables" / "aggregate.csv").write_text(AGGREGATE_CSV, encoding="utf-8")
    return store


def _board(site: Path, study: str = "coopeval") -> dict:
    return read_data(site, "data/index.js")["leaderboards"][study]


def test_a_copied_run_opens_with_the_same_leaderboard_and_stale_tables_are_named(tmp_path, capsys):
    """A run folder copied so that its tables are older than its store still shows the aggregate
    table's rows (matched by content); tables whose Mean differs from the store's are left out,
    and the build (stderr) and the page (index) say why in one line."""
    made = tmp_path / "made"
    made.mkdir()
    _run(made)
    build_site(made / "coopeval.duckdb", tmp_path / "site-made")
    copied = tmp_path / "copied"
    shutil.copytree(made, copied)
    for table in ("per_game.csv", "aggregate.csv"):  # cp -r in another order: the tables older than the store
        os.utime(copied / "tables" / table, (1, 1))
    build_site(copied / "coopeval.duckdb", tmp_path / "site-copied")
    rows = lambda site: [(r["mechanism"], r["game"], r["agent"], r["mean"]) for r in _board(site)["rows"]]  # noqa: E731
    assert rows(tmp_path / "site-copied") == rows(tmp_path / "site-made")
    assert [r["agent"] for r in _board(tmp_path / "site-copied")["rows"] if r["game"] == AGGREGATE] == ["model-y", "model-x"]
    stale = tmp_path / "stale"
    stale.mkdir()
    _run(stale)
    (stale / "tables" / "per_game.csv").write_text(PER_GAME_CSV.replace("model-y,1.0,", "model-y,1.25,"), encoding="utf-8")
    assert main(["explore", str(stale / "coopeval.duckdb"), "--out", str(tmp_path / "site-stale")]) == 0
    stderr = capsys.readouterr().err
    lines = [line for line in stderr.splitlines() if "per_game.csv" in line]
    assert len(lines) == 1 and "stale" in lines[0] and "1.25" in lines[0], stderr
    index = read_data(tmp_path / "site-stale", "data/index.js")
    assert "stale" in index["stale_tables"] and "\n" not in index["stale_tables"]
    assert not [r for r in index["leaderboards"]["coopeval"]["rows"] if r["game"] == AGGREGATE]


def test_letters_of_comparisons_that_cannot_test_say_so(tmp_path):
    """At one replicate with untestable comparisons (3 clusters), the board says "not testable (1
    replicate)" instead of giving both agents "a"; a gossip family of 3 replicates likewise."""
    store = make_store(tmp_path / "coopeval.duckdb")
    with duckdb.connect(str(store)) as con:
        for study, scope, metric, a, b, p, k in (("coopeval", "Repetition/prisoners_dilemma", "Mean", "model-x", "model-y", 0.25, 3),
                                                 ("gossip", "donation/align/random", "cooperation_ratio_mean", "model-g", "model-h", 0.25, 3)):  # fmt: skip
            con.execute("INSERT INTO comparisons (study, scope, metric, a, b, delta, ci_low, ci_high, p_value, p_adjusted, correction, n_clusters)"
                        " VALUES (?, ?, ?, ?, ?, 1.0, 0.5, 1.5, ?, ?, 'holm', ?)", [study, scope, metric, a, b, p, p, k])  # fmt: skip
        con.execute("INSERT INTO gossip_run_metrics (cell_id, run, testbed, condition, model, matching, cooperation_ratio_mean) VALUES"
                    " ('cellH', 'r1', 'donation', 'align', 'model-h', 'random', 0.4)")  # fmt: skip
        con.execute("UPDATE gossip_run_metrics SET matching = 'random'")
    build_site(store, tmp_path / "site")
    coopeval = {r["agent"]: r["mean_group"] for r in _board(tmp_path / "site")["rows"] if r["game"] == "prisoners_dilemma"}
    assert coopeval == {"model-x": "not testable (1 replicate)", "model-y": "not testable (1 replicate)"}
    gossip = {r["model"]: r["coop_group"] for r in _board(tmp_path / "site", "gossip")["rows"]}
    assert gossip == {"model-g": "not testable (3 replicates)", "model-h": "not testable (3 replicates)"}


def test_every_blank_has_a_reason_true_of_its_store(tmp_path):
    """One agent: its DR rank is undefined because DR compares agents (not "a store written before
    DR_rank" in a store that has DR ranks); a metric infinite in every cell gets a note instead of a
    chart dropped without a word; the gossip board says its cooperation counts the attackers."""
    store = make_store(tmp_path / "coopeval.duckdb")
    metric = "INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES (?, 'ours', 'r1', ?, ?, ?, ?, ?)"
    with duckdb.connect(str(store)) as con:
        con.execute(metric, ["cellA", "Repetition", "prisoners_dilemma", "model-x", "DR_rank", 1.0])
        con.execute(metric, ["cellA", "Repetition", "prisoners_dilemma", "model-y", "DR_rank", 2.0])
        con.execute(metric, ["solo", "NoMechanism", "prisoners_dilemma", "model-x", "Mean", 3.0])
        for cell, agent in (("cellA", "model-x"), ("cellA", "model-y"), ("solo", "model-x")):
            con.execute(metric, [cell, "Repetition" if cell == "cellA" else "NoMechanism", "prisoners_dilemma", agent, "Fitness", float("inf")])
    build_site(store, tmp_path / "site")
    board = _board(tmp_path / "site")
    solo = next(r for r in board["rows"] if r["mechanism"] == "NoMechanism" and r["game"] == "prisoners_dilemma")
    assert "one agent" in solo["dr_rank_why"] and "written before DR_rank" not in solo["dr_rank_why"]
    notes = read_data(tmp_path / "site", "data/index.js")["charts"]["notes"]["coopeval"]
    assert any("Fitness" in n and "infinite" in n for n in notes), notes
    assert "attackers included" in next(c["label"] for c in _board(tmp_path / "site", "gossip")["columns"] if c["key"] == "coop")


def test_group_size_rows_show_the_per_game_tables_intervals(tmp_path):
    """The per-game table's rows at N = 8 give the board's NoMechanism (n8) row its interval, as
    the default N = 3 row gets its own."""
    store = make_store(tmp_path / "coopeval.duckdb")
    metric = "INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES (?, 'ours', 'r1', 'NoMechanism', 'PublicGoods', ?, 'Mean', ?)"
    with duckdb.connect(str(store)) as con:
        for cell, variant, players, values in (("pg3", "default", 3, (1.0, 2.0)), ("pg8", "n8", 8, (1.5, 2.5))):
            con.execute("INSERT INTO cells (cell_id, mechanism, variant, game, replicate, players) VALUES (?, 'NoMechanism', ?, 'public_goods', 0, ?)", [cell, variant, players])
            for agent, value in zip(("model-x", "model-y"), values, strict=True):
                con.execute(metric, [cell, agent, value])
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "per_game.csv").write_text(
        "mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group,players,note\n"
        "NoMechanism,PublicGoods,Mean,model-y,2.0,,1,1.75,2.25,,3,\nNoMechanism,PublicGoods,Mean,model-x,1.0,,2,0.75,1.25,,3,\n"
        "NoMechanism,PublicGoods,Mean,model-y,2.5,,1,2.1,2.9,,8,\nNoMechanism,PublicGoods,Mean,model-x,1.5,,2,1.2,1.8,,8,\n", encoding="utf-8")
    build_site(store, tmp_path / "site")
    got = {(r["mechanism"], r["agent"]): r["mean"] for r in _board(tmp_path / "site")["rows"] if r["game"] == "PublicGoods"}
    assert got[("NoMechanism (n8)", "model-y")] == [2.5, None, 2.1, 2.9]
    assert got[("NoMechanism (n8)", "model-x")] == [1.5, None, 1.2, 1.8]
    assert got[("NoMechanism", "model-y")] == [2.0, None, 1.75, 2.25]


def test_rounds_without_toned_gossip_are_drawn_apart_from_no_data(tmp_path):
    """Round 1 of the fake gossip run has gossip only from an attacker: the tones chart has a
    'no toned gossip' bar for it (share 1), and no bar for a round that was not played."""
    store = make_store(tmp_path / "coopeval.duckdb")
    with duckdb.connect(str(store), read_only=True) as con:
        played = {r for (r,) in con.execute("SELECT DISTINCT round FROM gossip_rounds").fetchall()}
        honest = {r for (r,) in con.execute("SELECT DISTINCT round FROM gossip_rounds WHERE second_tone IS NOT NULL AND second_kind = 'honest'").fetchall()}
        tones = [c for c in gossip_charts(con) if c["kind"] == "gossip_tones"]
    bars = {(r["round"], r["tone"]): r["share"] for chart in tones for r in chart["rows"]}
    assert played - honest == {1}
    assert bars == {(1, "no toned gossip"): 1.0}


def test_honest_agents_solid_attackers_dashed_and_sixteen_series_apart():
    """The gossip chart fixes honest → solid line and circle, attackers → dashed and triangle,
    whatever rows it draws; the evolution charts' model scale has 16 distinct dashes and shapes
    (12 models told apart; Vega's default shapes repeat after 8) and narrowing widths, so that
    coinciding lines stay visible."""
    kinds = chart_kinds()
    encoding = kinds["gossip_cooperation"]["spec"]["spec"]["encoding"]
    assert encoding["strokeDash"]["scale"] == {"domain": ["honest", "attackers"], "range": [[1, 0], [6, 3]]}
    assert encoding["shape"]["scale"]["domain"] == ["honest", "attackers"]
    for kind in ("evolution_resources", "evolution_donation"):
        series = kinds[kind]["spec"]["spec"]["encoding"]
        dashes, shapes = series["strokeDash"]["scale"]["range"], series["shape"]["scale"]["range"]
        assert len({tuple(d) for d in dashes}) >= 12 and len(set(shapes)) >= 12
        widths = series["strokeWidth"]["scale"]["range"]  # coinciding lines: each next series narrower, drawn on top
        assert widths == sorted(widths, reverse=True) and len(set(widths)) == len(widths) > 1


def test_the_llm_average_has_no_dr_rank_in_any_panel(tmp_path):
    """The LLM Average has no DR rank per game (by definition); the aggregate table's row over the
    games gives it one (a mean of mean ranks), which the board leaves blank for the same reason."""
    store = _run(tmp_path)
    with duckdb.connect(str(store)) as con:
        con.execute("INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES"
                    " ('cellA', 'ours', 'r1', 'Repetition', 'prisoners_dilemma', 'LLM Average', 'Mean', 1.5)")  # fmt: skip
    with (tmp_path / "tables" / "aggregate.csv").open("a", encoding="utf-8") as handle:
        handle.write("Repetition,All,Mean,LLM Average,0.5,,,,,\nRepetition,All,DR,LLM Average,1.5,,,,,\n")
    build_site(store, tmp_path / "site")
    rows = {r["game"]: r for r in _board(tmp_path / "site")["rows"] if r["agent"] == "LLM Average"}
    assert set(rows) == {"prisoners_dilemma", AGGREGATE}
    assert rows[AGGREGATE]["mean"][0] == 0.5
    for row in rows.values():
        assert row["dr_rank"][0] is None and "by definition" in row["dr_rank_why"]


def test_a_store_of_bots_says_why_it_has_no_llm_average(tmp_path):
    """The LLM Average averages LLM agents only (issue 47): a store whose agents are all scripted
    bots has no LLM Average row, and the board's note says why; a store of models does not say so."""
    store = _run(tmp_path)
    build_site(store, tmp_path / "models")
    assert "No LLM Average row" not in _board(tmp_path / "models")["note"]
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE metrics SET agent = 'bot/' || agent")
    build_site(store, tmp_path / "bots")
    board = _board(tmp_path / "bots")
    assert {r["agent"] for r in board["rows"]} == {"bot/model-x", "bot/model-y"}
    assert "No LLM Average row: no agent of this store is a language model (scripted bots and people only)" in board["note"]


def test_a_store_of_bots_with_the_evaluations_notes_has_no_blank_llm_average_row(tmp_path):
    """Every evaluated cell writes an LLM Average ``ExcludedMatchups`` row (the count of excluded
    match-ups, coopeval.studies.coopeval.evaluate): in a store of bots it is the LLM Average's only
    row, and the board must not show it as an LLM Average of blanks."""
    store = _run(tmp_path)
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE metrics SET agent = 'bot/' || agent")
        con.execute(
            "INSERT INTO metrics SELECT * REPLACE (? AS agent, 'ExcludedMatchups' AS metric, 0.0 AS value) "
            "FROM metrics WHERE metric = 'Mean' AND agent = 'bot/model-x'",
            [LLM_AVERAGE],
        )
    build_site(store, tmp_path / "bots")
    board = _board(tmp_path / "bots")
    assert {r["agent"] for r in board["rows"]} == {"bot/model-x", "bot/model-y"}
    assert "No LLM Average row: no agent of this store is a language model" in board["note"]


def test_a_person_seated_under_a_label_is_not_taken_for_a_model(tmp_path):
    """The board classifies agents by the roster (the model string their calls recorded), not by
    name (issue 47): a person seated as ``alice(IO)`` beside a bot labelled ``tft`` leaves no
    language model in the store, and the note says why there is no LLM Average row."""
    store = _run(tmp_path)
    with duckdb.connect(str(store)) as con:
        for old, agent, model in (
            ("model-x", "alice(IO)", "human/alice"),
            ("model-y", "bot/tft", "bot/tit-for-tat"),
        ):
            con.execute("UPDATE metrics SET agent = ? WHERE agent = ?", [agent, old])
            calls = "UPDATE llm_calls SET agent = ?, model = ? WHERE agent = ?"
            con.execute(calls, [agent, model, old])
    build_site(store, tmp_path / "site")
    board = _board(tmp_path / "site")
    assert {r["agent"] for r in board["rows"]} == {"alice(IO)", "bot/tft"}
    why = "No LLM Average row: no agent of this store is a language model (scripted bots and people only)"
    assert why in board["note"]
