"""The population-comparison declaration shared by gossip and evolution (``coopeval compare``)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from coopeval.comparison.populations import PopulationComparison
from coopeval.studies.evolution.comparisons import store_comparison as evolution_store_comparison
from coopeval.studies.evolution.records import TABLES as EVO_TABLES

# donation fraction at the last generation (2) per (protocol, model, run); mean_final = 100 × it
LAST = {("vh", "a", 1): 0.9, ("vh", "a", 2): 0.6, ("vh", "b", 1): 0.5, ("vh", "b", 2): 0.4,
        ("horibe", "a", 1): 0.2, ("horibe", "b", 1): 0.7}


def _conformed(rows: list[dict[str, object]], table: str) -> pl.DataFrame:
    schema = EVO_TABLES[table]
    frame = pl.DataFrame(rows)
    return frame.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in schema.items() if c not in frame.columns]).select(list(schema)).cast(schema)


def _evolution_store(path: Path) -> Path:
    generations = [
        {"source": "ours", "cell_id": f"{p}{m}{r}", "run": f"r{r}", "protocol": p, "variant": "default", "model": m,
         "generation": g, "donation_fraction": d if g == 2 else 0.0, "mean_final": 100.0 * d if g == 2 else 0.0}
        for (p, m, r), d in LAST.items() for g in (1, 2)]
    invasions = [{"source": "ours", "cell_id": "vha1", "run": "r1", "protocol": "vh", "variant": "default", "model": "a",
                  "generation": 2, "strategy_id": "x", "robust": True}]
    con = duckdb.connect(str(path))
    for table, rows in (("evo_generations", generations), ("invasion_tests", invasions)):
        con.register("source", _conformed(rows, table).to_arrow())
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM source")
        con.unregister("source")
    con.close()
    return path


def test_evolution_store_comparison_selects_protocol_and_variant_in_scope_order(tmp_path: Path) -> None:
    store = _evolution_store(tmp_path / "s.duckdb")
    row = evolution_store_comparison(store, "a", "b", mechanism="vh", game="default")
    # default metric: the donation fraction; runs r1, r2 of vh: ((0.9 − 0.5) + (0.6 − 0.4)) / 2
    assert row["metric"] == "donation_fraction" and row["scope"] == "vh/default"
    assert row["delta"] == pytest.approx(0.3) and row["n_clusters"] == 2
    # no --mechanism: protocols pooled, clusters are (protocol, variant, run): (0.4 + 0.2 − 0.5) / 3
    pooled = evolution_store_comparison(store, "a", "b", metric="mean_final")
    assert pooled["scope"] == "*/*" and pooled["n_clusters"] == 3
    assert pooled["delta"] == pytest.approx(100.0 * (0.4 + 0.2 - 0.5) / 3)
    # b has no invasion test: no shared replicate, null numbers and the reason
    robust = evolution_store_comparison(store, "a", "b", metric="robustness", mechanism="vh")
    assert robust["delta"] is None and "share no replicate with a finite robustness" in robust["note"]


def test_a_filter_column_outside_the_scope_is_refused() -> None:
    with pytest.raises(ValueError, match="game_column: 'testbed' is not a scope column"):
        PopulationComparison(study="x", scope_columns=("protocol", "variant"), replicate_column="run", metrics=("m",),
                             game_column="testbed", mechanism_column="protocol", tables=("t",))
