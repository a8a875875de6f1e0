"""``coopeval explore``: builds the site of a store, refuses a missing store."""

from __future__ import annotations

from coopeval.cli import main
from tests.explorer.fake_store import make_store, read_data


def test_explore_builds_the_site_without_raw_replies(tmp_path, capsys):
    store = make_store(tmp_path / "coopeval.duckdb")
    assert main(["explore", str(store), "--out", str(tmp_path / "site"), "--no-raw-replies"]) == 0
    out = capsys.readouterr().out
    assert "5 cells, 14 decisions" in out and "Raw replies left out" in out
    assert (tmp_path / "site" / "index.html").is_file()
    assert read_data(tmp_path / "site", "data/index.js")["raw_replies"] is False


def test_explore_missing_store_is_a_usage_error(tmp_path, capsys):
    assert main(["explore", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "site")]) == 2
    assert "none.duckdb not found" in capsys.readouterr().err


def test_a_store_another_process_writes_is_named_as_locked_not_as_unreadable(tmp_path):
    """DuckDB refuses a read-only open while another process holds the write lock: explore and
    compare say so, naming the holder, instead of calling the store unreadable."""
    import os
    import subprocess
    import sys

    import duckdb

    path = tmp_path / "busy.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE decisions (cell_id VARCHAR)")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        for args in (["explore", str(path), "--out", str(tmp_path / "site")], ["compare", str(path), "--study", "coopeval", "--a", "x", "--b", "y"]):
            done = subprocess.run([sys.executable, "-m", "coopeval.cli", *args], capture_output=True, text=True, env=env, timeout=120)
            assert done.returncode == 2, done.stderr
            assert f"store {path} is open for writing in " in done.stderr and f"(PID {os.getpid()})" in done.stderr
            assert "not a readable" not in done.stderr and "See also" not in done.stderr


def test_explore_builds_into_the_current_folder_when_it_is_empty(tmp_path, capsys, monkeypatch):
    store = make_store(tmp_path / "coopeval.duckdb")
    site = tmp_path / "here"
    site.mkdir()
    monkeypatch.chdir(site)
    assert main(["explore", str(store), "--out", "."]) == 0
    assert (site / "index.html").is_file() and read_data(site, "data/index.js")["cells"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path / "mine")
    assert main(["explore", str(store), "--out", "."]) == 2  # a folder of the user's is still refused
    assert "is not empty" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_a_duckdb_file_without_tables_is_refused_and_nothing_is_written(tmp_path, capsys):
    import duckdb

    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    assert main(["explore", str(empty), "--out", str(tmp_path / "site")]) == 2
    assert f"store {empty} holds no tables" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()
