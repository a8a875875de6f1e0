"""The explorer's builder on a small store of every study (tests/explorer/fake_store.py)."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest

from coopeval.explorer import build
from coopeval.explorer.build import bucket, build_site
from coopeval.explorer.episodes import LEFT_OUT, episode_key
from coopeval.explorer.search_index import SearchIndex, word_bucket
from tests.explorer.fake_store import (
    BIG_REPLY,
    FAILED,
    JUDGE_REASONING,
    JUDGED,
    REASKED,
    SCRIPT_REPLY,
    make_store,
    prompt_text,
    read_data,
    site_text,
)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("store") / "coopeval.duckdb")


def _decision(site, decision_id):
    cell, key, part = read_data(site, f"data/dix/{bucket(decision_id)}.js")[decision_id].rsplit("/", 2)
    decisions = read_data(site, f"data/ep/{key}.{part}.js")["decisions"]
    (found,) = [d for d in decisions if d["decision_id"] == decision_id]
    return cell, key, found


def test_every_decision_is_indexed_with_its_prompt_and_replies(store, tmp_path):
    report = build_site(store, tmp_path / "site")
    site = tmp_path / "site"
    assert (report.cells, report.decisions, report.missing) == (5, 14, {})
    cell, key, d = _decision(site, FAILED)
    assert (cell, key) == ("cellA", episode_key("cellA", "x|y"))
    assert [a["response"] for a in d["attempts"]] == [SCRIPT_REPLY, BIG_REPLY]
    assert d["attempts"][0]["messages"] == [{"role": "user", "content": prompt_text("cellA", 1, 1)}]
    # the re-ask keeps only what was added to the first prompt: the rejected reply and the re-ask text
    assert d["attempts"][1]["added"] is True
    assert [m["role"] for m in d["attempts"][1]["messages"]] == ["assistant", "user"]
    assert d["status"] == "failed" and d["n_attempts"] == 2
    judge = _decision(site, JUDGED)[2]["judge"]
    assert (judge["labels"], judge["confidence"], judge["reasoning"]) == (["reciprocity", "fairness"], 0.9, JUDGE_REASONING)
    for decision_id, cell_id in (("dG-r2", "cellG"), ("dE-1", "cellE"), ("dB-r2-s1", "cellB")):
        assert _decision(site, decision_id)[0] == cell_id
    # no data file can be read as markup: an episode part is base64 only, and '<' is escaped in its JSON too
    text = (site / f"data/ep/{key}.0.js").read_text()
    packed = text[len("CE.registerPacked(") :].split(",", 1)[1]
    assert re.fullmatch(r'"[A-Za-z0-9+/=]*"\);\n', packed)
    assert "<" not in gzip.decompress(base64.b64decode(json.loads(packed[:-3]))).decode("ascii")


def test_flags_list_exactly_the_failed_and_reasked_decisions(store, tmp_path):
    build_site(store, tmp_path / "site")
    index = read_data(tmp_path / "site", "data/index.js")
    flags = read_data(tmp_path / "site", "data/flags/0.js")
    assert index["flag_parts"] == 1
    assert [f[0] for f in flags if f[7] == "failed"] == [FAILED]
    assert sorted(f[0] for f in flags if f[8] > 1) == [FAILED, REASKED]


def test_leaderboards_are_means_with_normal_intervals(store, tmp_path):
    build_site(store, tmp_path / "site")
    boards = read_data(tmp_path / "site", "data/index.js")["leaderboards"]
    rows = {(r["game"], r["agent"]): r for r in boards["coopeval"]["rows"]}
    assert rows[("prisoners_dilemma", "model-x")]["mean"] == [2.0, None]  # one cell: no interval
    # all games without an aggregate table: Mean 2 and 4 -> 3 ± 1.96 * sd(2, 4) / sqrt(2) = 3 ± 1.96
    assert rows[("all games (raw points)", "model-x")]["mean"] == pytest.approx([3.0, 1.96])
    assert rows[("all games (raw points)", "model-y")]["mean"] == pytest.approx([1.0, 0.0])
    (gossip,) = boards["gossip"]["rows"]
    # 0.5 and 0.7: mean 0.6, sd 0.1414, interval 1.96 * 0.1414 / 1.4142 = 0.196
    assert gossip["coop"] == pytest.approx([0.6, 0.196])
    assert gossip["image"] == [2.0, None]  # NaN (image score undefined in that run) is left out
    (evolution,) = boards["evolution"]["rows"]
    assert evolution["final"] == [30.0, None]  # the last generation's mean resources


def test_no_raw_replies_leaves_replies_out_and_keeps_prompts(store, tmp_path):
    build_site(store, tmp_path / "site", raw_replies=False)
    site = tmp_path / "site"
    text = site_text(site)
    assert "PWNED" not in text and "bold" not in text and "I pick A0" not in text and JUDGE_REASONING not in text
    assert _decision(site, JUDGED)[2]["judge"]["labels"] == ["reciprocity", "fairness"]
    assert json.dumps(prompt_text("cellA", 1, 1))[1:-1] in text
    _, _, d = _decision(site, REASKED)
    assert d["attempts"][1]["response"] == LEFT_OUT and d["attempts"][1]["messages"][0]["content"] == LEFT_OUT
    assert d["parsed"] == '{"A0": 100, "A1": 0}'
    assert read_data(site, "data/index.js")["raw_replies"] is False


def test_store_without_a_study_table_builds_the_others(store, tmp_path):
    partial = make_store(tmp_path / "partial.duckdb", drop=["gossip_rounds", "gossip_run_metrics"])
    report = build_site(partial, tmp_path / "site")
    index = read_data(tmp_path / "site", "data/index.js")
    assert report.missing == {"gossip": ["gossip_rounds", "gossip_run_metrics"]} == index["missing"]
    assert sorted(index["leaderboards"]) == ["coopeval", "evolution"]
    assert read_data(tmp_path / "site", "data/cell/cellE.js")["extras"]["strategies"][1]["parent_id"] == "1_1"
    assert read_data(tmp_path / "site", "data/cell/cellG.js")["extras"] == {}


def test_a_study_table_of_another_version_is_reported_and_the_rest_built(tmp_path):
    """A store whose gossip_rounds predates the role-named columns (first_index …): the gossip
    extras and leaderboard are left out with the reason, every decision is still written."""
    import duckdb

    old = make_store(tmp_path / "old.duckdb")
    with duckdb.connect(str(old)) as con:
        con.execute("ALTER TABLE gossip_rounds RENAME COLUMN first_index TO donor_index")
    report = build_site(old, tmp_path / "site")
    index = read_data(tmp_path / "site", "data/index.js")
    assert (report.cells, report.decisions, report.missing) == (5, 14, {})
    assert list(report.unreadable) == ["gossip"] and list(index["unreadable"]) == ["gossip"]
    (entry,) = report.unreadable["gossip"]
    assert entry.startswith("gossip_rounds (") and '"first_index" not found' in entry
    assert sorted(index["leaderboards"]) == ["coopeval", "evolution"]
    assert read_data(tmp_path / "site", "data/cell/cellG.js")["extras"] == {}
    assert read_data(tmp_path / "site", "data/cell/cellE.js")["extras"]["strategies"][1]["parent_id"] == "1_1"


def test_cell_ids_that_are_no_plain_file_name_stay_inside_the_site(tmp_path):
    """A reference id holds '/', a damaged store may hold '../…': each cell's data file is named
    by ``cell_file`` inside data/cell/, listed in the index, and nothing is written elsewhere."""
    import duckdb

    from coopeval.explorer.build import cell_file

    odd = {"cellA": "../../escape", "cellB": "run1/contracting_trust_game"}
    store = make_store(tmp_path / "odd.duckdb")
    with duckdb.connect(str(store)) as con:
        tables = con.execute(
            "SELECT DISTINCT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_name)"
            " WHERE c.column_name = 'cell_id' AND t.table_type = 'BASE TABLE'"
        ).fetchall()
        for (table,) in tables:
            for old, new in odd.items():
                con.execute(f'UPDATE "{table}" SET cell_id = ? WHERE cell_id = ?', [new, old])
    site = tmp_path / "deep" / "site"
    build_site(store, site)
    index = read_data(site, "data/index.js")
    files = {c["cell_id"]: c["file"] for c in index["cells"]}
    for new in odd.values():
        assert files[new] == cell_file(new) and files[new].startswith("c") and len(files[new]) == 17
        assert read_data(site, f"data/cell/{files[new]}.js")["cell_id"] == new
    assert _decision(site, "dB-r2-s1")[0] == odd["cellB"]  # the decision index keeps the id with its '/'
    assert files["cellE"] == "cellE"
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    assert all(str(p).startswith("deep/site/") or p.name == "odd.duckdb" for p in written)
    assert sorted(p.name for p in (site / "data" / "cell").iterdir()) == sorted(f"{f}.js" for f in files.values())


def test_large_episodes_are_split_in_parts(store, tmp_path, monkeypatch):
    monkeypatch.setattr(build, "PART_BYTES", 50_000)
    report = build_site(store, tmp_path / "site")
    cell = read_data(tmp_path / "site", "data/cell/cellA.js")
    (episode,) = cell["episodes"]
    # the failed decision (100 KB reply) stands alone: [dA-r1-s1] [dA-r1-s2 …]
    assert episode["parts"] == 2
    assert [d["decision_id"] for d in read_data(tmp_path / "site", f"data/ep/{episode['key']}.0.js")["decisions"]] == [FAILED]
    assert report.largest[1] < 2 * len(BIG_REPLY)  # the reply is stored once, in its attempt


def test_missing_store_and_foreign_output_folder_are_refused(tmp_path, store):
    with pytest.raises(FileNotFoundError, match=r"store .* not found"):
        build_site(tmp_path / "nope.duckdb", tmp_path / "site")
    (tmp_path / "other" / "data").mkdir(parents=True)
    with pytest.raises(FileExistsError, match="holds no explorer"):
        build_site(store, tmp_path / "other")


def test_nothing_of_a_users_is_overwritten(tmp_path, store):
    """A folder that is not an explorer's (another site), a file, the current folder, or a bad
    store: refused before anything is written; a good site survives a failed rebuild."""
    other = tmp_path / "mkdocs_site"
    other.mkdir()
    (other / "index.html").write_text("<p>my docs</p>")
    with pytest.raises(FileExistsError, match="not empty"):
        build_site(store, other)
    assert [p.name for p in other.iterdir()] == ["index.html"]
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FileExistsError, match="is a file"):
        build_site(store, tmp_path / "afile")
    with pytest.raises(FileExistsError, match="--out"):
        build_site(store, "")
    site = tmp_path / "site"
    build_site(store, site)
    before = sorted(p.relative_to(site) for p in site.rglob("*"))
    not_duckdb = tmp_path / "text.duckdb"
    not_duckdb.write_text("not a database")
    with pytest.raises(FileNotFoundError, match="not a readable DuckDB"):
        build_site(not_duckdb, site)
    with pytest.raises(FileNotFoundError, match="is a folder"):
        build_site(tmp_path, site)
    assert sorted(p.relative_to(site) for p in site.rglob("*")) == before
    build_site(store, site)  # an explorer's own folder is rebuilt in place


def test_the_runs_merged_config_beside_the_store_is_shown(store, tmp_path):
    build_site(store, tmp_path / "a")  # the fixture's store has no config beside it
    assert read_data(tmp_path / "a", "data/index.js")["config"] is None
    copy = tmp_path / "run" / "coopeval.duckdb"
    copy.parent.mkdir()
    copy.write_bytes(store.read_bytes())
    (copy.parent / "config.effective.yaml").write_text("seed: 7\nstudies: [coopeval]\n")
    build_site(copy, tmp_path / "b")
    assert read_data(tmp_path / "b", "data/index.js")["config"] == "seed: 7\nstudies: [coopeval]\n"


def test_an_interrupted_build_is_replaced(store, tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "run_overview", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_site(store, tmp_path / "site")
    assert not (tmp_path / "site" / "data" / "index.js").exists()
    monkeypatch.undo()
    assert build_site(store, tmp_path / "site").decisions == 14


def test_reading_in_chunks_of_cells_writes_the_same_site(store, tmp_path, monkeypatch):
    build_site(store, tmp_path / "whole")
    monkeypatch.setattr(build, "CHUNK_DECISIONS", 3)  # every cell its own chunk (cells have 2-4 decisions)
    assert list(build._chunks([{"decisions": 2}, {"decisions": 1}, {"decisions": 4}, {"decisions": 1}])) == [
        [{"decisions": 2}, {"decisions": 1}],
        [{"decisions": 4}],
        [{"decisions": 1}],
    ]
    build_site(store, tmp_path / "chunked")
    whole = {p.relative_to(tmp_path / "whole"): p.read_text() for p in (tmp_path / "whole" / "data").rglob("*.js") if p.name != "index.js"}
    chunked = {p.relative_to(tmp_path / "chunked"): p.read_text() for p in (tmp_path / "chunked" / "data").rglob("*.js") if p.name != "index.js"}
    assert len(whole) > 260 and whole == chunked


def _postings(site, word):
    index = read_data(site, "data/index.js")["search"]
    found = read_data(site, f"data/words/{word_bucket(word, index['buckets'])}.js").get(word, [])
    episodes = read_data(site, "data/words/ep0.js")
    return [episodes[n] for n in found]


def test_search_index_maps_each_reply_word_to_its_episodes(store, tmp_path):
    build_site(store, tmp_path / "site")
    site = tmp_path / "site"
    gossip = [read_data(site, f"data/cell/{c}.js")["episodes"][0] for c in ("cellG", "cellH")]
    assert _postings(site, "helped") == [["cellG", gossip[0]["key"], 1]]  # one reply of one cell
    assert _postings(site, "praising") == [["cellG", gossip[0]["key"], 1], ["cellH", gossip[1]["key"], 1]]
    # words of every attempt, lower-cased: "PWNED" is in the first (rejected) reply of dA-r1-s1
    assert [p[0] for p in _postings(site, "pwned")] == ["cellA"]
    assert _postings(site, "we") == []  # shorter than three letters: not a word
    assert _postings(site, "you") == []  # prompts are not searched, replies are
    assert len(list((site / "data" / "words").glob("[0-9]*.js"))) == read_data(site, "data/index.js")["search"]["buckets"] == 256


def test_search_index_buckets_agree_with_duckdb_for_any_letters(tmp_path):
    """The bucket DuckDB files a word under is the one Python (and the page) computes."""
    index = SearchIndex(str(tmp_path))
    words = ["helped", "été", "ǅemal", "日本語", "x" * 40, "a0b", "𝔘nicode"]
    index.add("c", "k", 1, set(words))
    index.write(tmp_path, lambda relative, size: None)
    for word in words:
        assert word in read_data(tmp_path, f"data/words/{word_bucket(word, 256)}.js")


def test_a_folder_holding_only_screenshots_is_built_and_keeps_them(store, tmp_path):
    """The browser tests write results/explorer/screenshots/ before the workflow builds the site there."""
    shot = tmp_path / "site" / "screenshots" / "landing.png"
    shot.parent.mkdir(parents=True)
    shot.write_bytes(b"png")
    build_site(store, tmp_path / "site")
    build_site(store, tmp_path / "site")
    assert shot.read_bytes() == b"png" and (tmp_path / "site" / "data" / "index.js").exists()


def test_bucket_is_the_polynomial_hash_the_page_computes():
    def page(text):  # explorer.js: h = (h * 31 + charCode) % 256
        h = 0
        for ch in text:
            h = (h * 31 + ord(ch)) % 256
        return h

    for text in ("", "a", "dA-r1-s1", "60d30cae25de12d1", "x" * 5000, "été-1"):
        assert bucket(text) == page(text)


def test_a_packed_part_is_strict_json_with_non_finite_numbers_named(tmp_path):
    from coopeval.explorer.scripts import read_payload, to_strict_json, write_packed

    value = {"points": float("nan"), "x": [float("inf"), -float("inf"), 1.5], "text": "NaN <b>"}
    encoded = to_strict_json(value)
    expected = {"points": "NaN", "x": ["Infinity", "-Infinity", 1.5], "text": "NaN <b>"}
    assert json.loads(encoded) == expected  # JSON.parse reads it (no bare NaN)
    assert to_strict_json({"a": 1.5, "t": "fine"}) == '{"a":1.5,"t":"fine"}'
    size = write_packed(tmp_path, "data/ep/k.0.js", "ep:k:0", encoded)
    text = (tmp_path / "data/ep/k.0.js").read_text()
    assert size == len(text) and read_payload(text) == ("ep:k:0", expected)
    assert write_packed(tmp_path, "data/ep/k.1.js", "ep:k:0", encoded) == size and (tmp_path / "data/ep/k.1.js").read_text() == text  # deterministic


def test_a_store_with_one_id_in_two_cells_is_named_and_counted_per_cell(tmp_path):
    """A store written before decision ids were unique (issue 41 item 1; build_store now refuses
    one): the build names the shared id, its #decision= link keeps the first cell's decision, and
    the overview counts the decisions per cell and id, as SQL does."""
    import duckdb

    store = make_store(tmp_path / "coopeval.duckdb")
    with duckdb.connect(str(store)) as con:  # the same bot decision id in a second gossip cell
        con.execute("INSERT INTO decisions BY NAME SELECT * EXCLUDE (mechanism, game) REPLACE ('cellH' AS cell_id) FROM decisions WHERE decision_id = 'dG-r1'")
        con.execute("INSERT INTO llm_calls BY NAME SELECT * EXCLUDE (mechanism, game) REPLACE ('cellH' AS cell_id) FROM llm_calls WHERE decision_id = 'dG-r1'")
        expected = dict(con.execute("SELECT model, count(DISTINCT (cell_id, decision_id)) FROM llm_calls WHERE study = 'gossip' GROUP BY model").fetchall())
    report = build_site(store, tmp_path / "site")
    assert report.shared_ids == ["dG-r1"]
    site = tmp_path / "site"
    index = read_data(site, "data/index.js")
    assert index["shared_ids"] == {"count": 1, "examples": ["dG-r1"]}
    assert _decision(site, "dG-r1")[0] == "cellG"
    counted = {m["model"]: m["decisions"] for m in index["overview"]["models"] if m["study"] == "gossip"}
    assert counted == expected == {"model-g": 3, "model-h": 2}


AGGREGATE_CSV = """mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group
Repetition,All,Mean,model-x,0.25,0.05,2,0.1,0.4,b
Repetition,All,Mean,model-y,0.9,0.1,1,0.7,1.05,a
Repetition,All,DR_exact,model-y,0.0,,1,,,a
"""


PER_GAME_CSV = """mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group
Repetition,prisoners_dilemma,Mean,model-x,2.0,,1,1.5,2.5,a
Repetition,prisoners_dilemma,Mean,model-y,1.0,,2,0.5,1.5,b
"""


def test_all_games_rows_are_the_aggregate_tables(tmp_path):
    """With the run's aggregate table beside the store, the board's row over the games is that
    table's: its normalised quantity, interval and letters, and says which it is (issue 41
    item 6); the raw average over games (3.0 for model-x, above model-y) is not shown."""
    import os

    import duckdb

    store = make_store(tmp_path / "coopeval.duckdb")
    (tmp_path / "tables").mkdir()
    table = tmp_path / "tables" / "aggregate.csv"
    table.write_text(AGGREGATE_CSV, encoding="utf-8")
    (tmp_path / "tables" / "per_game.csv").write_text(PER_GAME_CSV, encoding="utf-8")
    build_site(store, tmp_path / "site")
    board = read_data(tmp_path / "site", "data/index.js")["leaderboards"]["coopeval"]
    over = [r for r in board["rows"] if r["game"] == "social dilemmas (normalised)"]
    with duckdb.connect() as con:
        expected = con.execute(f"SELECT agent, mean, ci_low, ci_high, tie_group FROM read_csv('{table}') WHERE metric = 'Mean' ORDER BY mean DESC").fetchall()
    assert [(r["agent"], r["mean"][0], r["mean"][2], r["mean"][3], r["mean_group"]) for r in over] == expected
    assert [r["interval"] for r in over] == ["95 % percentile bootstrap (aggregate table)"] * 2
    assert not [r for r in board["rows"] if r["game"] == "all games (raw points)"]
    assert "aggregate result table" in board["note"]
    chart = next(c for c in read_data(tmp_path / "site", "data/index.js")["charts"]["charts"] if c["kind"] == "board:coopeval:mean")
    drawn = [r for r in read_data(tmp_path / "site", f"data/charts/{chart['file']}.js") if r["game"] == "social dilemmas (normalised)"]
    assert [(r["agent"], r["value"], r["lo"], r["hi"], r["group"]) for r in drawn] == expected
    # a per-game row of one cell takes the per-game table's interval over match-ups (item 7), where the values agree
    per_game = {r["agent"]: r for r in board["rows"] if r["game"] == "prisoners_dilemma"}
    assert per_game["model-x"]["mean"] == [2.0, None, 1.5, 2.5]
    assert per_game["model-x"]["interval"] == "95 % percentile bootstrap over runs and match-ups (per-game table)"
    assert per_game["model-y"]["mean"] == [1.0, None, 0.5, 1.5]
    # tables older than the store (a folder copied with cp -r) are matched by content, not by time: still used (issue 47)
    os.utime(table, (1, 1))
    os.utime(tmp_path / "tables" / "per_game.csv", (1, 1))
    build_site(store, tmp_path / "site")
    board = read_data(tmp_path / "site", "data/index.js")["leaderboards"]["coopeval"]
    assert [r["mean"][0] for r in board["rows"] if r["game"] == "social dilemmas (normalised)"] == [e[1] for e in expected]
