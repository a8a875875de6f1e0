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
