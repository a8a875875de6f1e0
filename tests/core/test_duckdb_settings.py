"""DuckDB's thread count and memory limit are set (small defaults, configurable) and logged on
every connection the package opens (issue 25 kind 8); checked with DuckDB's own
``current_setting``."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.core.duckdb_settings import duckdb_settings, open_duckdb
from coopeval.core.environment import EnvironmentSettingError
from coopeval.pipeline.store import STORE_MEMORY_ENV, STORE_THREADS_ENV, build_store


def _settings(con) -> tuple[int, str]:
    return con.execute("SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()


def test_defaults_are_small_and_applied(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(STORE_THREADS_ENV, raising=False)
    monkeypatch.delenv(STORE_MEMORY_ENV, raising=False)
    assert duckdb_settings() == {"threads": 2, "memory_limit": "1GB"}
    con = open_duckdb(tmp_path / "a.duckdb", purpose="test")
    # 1GB = 10^9 bytes = 953.67 MiB, which DuckDB prints truncated to one decimal
    assert _settings(con) == (2, "953.6 MiB")
    con.close()
    assert f"[duckdb] test {tmp_path / 'a.duckdb'} (read-write): threads = 2, memory_limit = 953.6 MiB" in capsys.readouterr().err


def test_the_environment_sets_them_for_readers_and_the_store_build(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(STORE_THREADS_ENV, "3")
    monkeypatch.setenv(STORE_MEMORY_ENV, "512MB")
    path = tmp_path / "cell" / "decisions.parquet"
    path.parent.mkdir()
    pl.DataFrame({"cell_id": ["c"], "points": [1.0]}).write_parquet(path)
    out = tmp_path / "store.duckdb"
    build_store({"decisions": [str(path)]}, out)
    err = capsys.readouterr().err
    # 512MB = 512·10^6 bytes = 488.28 MiB
    assert f"[duckdb] store build {out.with_name('store.duckdb.tmp')} (read-write): threads = 3, memory_limit = 488.2 MiB" in err
    con = open_duckdb(out, read_only=True, log=False)
    assert _settings(con) == (3, "488.2 MiB")
    con.close()
    assert capsys.readouterr().err == ""


def test_bad_settings_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv(STORE_THREADS_ENV, "0")
    with pytest.raises(EnvironmentSettingError, match="COOPEVAL_STORE_THREADS='0': give a whole number of threads >= 1"):
        open_duckdb(tmp_path / "b.duckdb")
