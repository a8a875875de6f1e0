"""Gossip and evolution: populations compared across replicates paired by seed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import polars as pl
import pytest

from coopeval.cli import main
from coopeval.studies.evolution.comparisons import evolution_comparison_rows, run_metrics
from coopeval.studies.evolution.records import TABLES as EVO_TABLES
from coopeval.studies.gossip.comparisons import gossip_comparison_rows
from coopeval.studies.gossip.records import TABLES as GOSSIP_TABLES

# cooperation ratio per (model, replicate); m2 lacks replicate 4 (left out of the pairing)
COOP = {"m1": {1: 0.9, 2: 0.7, 3: 0.8, 4: 0.5}, "m2": {1: 0.4, 2: 0.6, 3: 0.5}, "m3": {1: 0.9, 2: 0.7, 3: 0.8, 4: 0.5}}
GINI = {"m1": {1: 0.2, 2: math.nan, 3: 0.3, 4: 0.1}, "m2": {1: 0.1, 2: 0.2, 3: 0.1}, "m3": {1: 0.2, 2: 0.1, 3: 0.3, 4: 0.1}}


def _gossip_runs() -> pl.DataFrame:
    rows = [{"cell_id": f"{m}{r}", "run": f"r{r}", "testbed": "donation", "condition": "gossip", "model": m, "replicate": r,
             "matching": "random", "cooperation_ratio_mean": v, "gini": GINI[m][r], "discounted_return_mean": 10 * v}
            for m, reps in COOP.items() for r, v in reps.items()]
    schema = GOSSIP_TABLES["gossip_run_metrics"]
    return pl.DataFrame(rows).with_columns([pl.lit(None, dtype=t).alias(c) for c, t in schema.items() if c not in rows[0]]).select(list(schema)).cast(schema)


def test_gossip_models_are_paired_by_replicate() -> None:
    rows = {(r["metric"], r["a"], r["b"]): r for r in gossip_comparison_rows(_gossip_runs())}
    r = rows[("cooperation_ratio_mean", "m1", "m2")]
    # replicates 1–3 only: (0.5 + 0.1 + 0.3) / 3
    assert r["delta"] == pytest.approx(0.3) and r["n_clusters"] == 3 and r["scope"] == "donation/gossip/random"
    # 3 positive differences: exact sign flips, only the all-positive and all-negative patterns reach |0.9|: 2/8
    assert r["p_value"] == pytest.approx(0.25)
    same = rows[("cooperation_ratio_mean", "m1", "m3")]
    assert same["delta"] == 0.0 and same["p_value"] == 1.0
    # a NaN Gini (mean return ≤ 0) leaves that replicate out: m1 vs m2 on replicates 1 and 3
    g = rows[("gini", "m1", "m2")]
    assert g["n_clusters"] == 2 and g["delta"] == pytest.approx(((0.2 - 0.1) + (0.3 - 0.1)) / 2)
    assert ("utility_gap", "m1", "m2") not in rows  # no attackers: no finite value, no row
    family = [x for x in rows.values() if x["metric"] == "cooperation_ratio_mean"]
    assert all(x["correction"] == "holm" and x["p_adjusted"] >= x["p_value"] for x in family)


def test_evolution_run_metrics_take_the_last_generation_and_the_robust_share() -> None:
    keys = {"source": "ours", "protocol": "vh", "variant": "default"}
    generations = pl.DataFrame([
        {**keys, "cell_id": f"{m}{r}", "run": f"r{r}", "model": m, "generation": g, "donation_fraction": d + g / 10,
         "mean_final": 100.0 * d + g}
        for m, base in (("a", 0.5), ("b", 0.3)) for r, d in ((1, base), (2, base + 0.1)) for g in (1, 2)])
    invasions = pl.DataFrame([
        {**keys, "cell_id": f"{m}{r}", "run": f"r{r}", "model": m, "generation": 2, "strategy_id": s, "robust": robust}
        for m, r, s, robust in (("a", 1, "x", True), ("a", 1, "y", False), ("a", 2, "x", True), ("b", 1, "x", False),
                                ("b", 2, "x", False))])
    schema_g, schema_i = EVO_TABLES["evo_generations"], EVO_TABLES["invasion_tests"]
    fill = lambda f, s: f.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in s.items() if c not in f.columns]).select(list(s)).cast(s)  # noqa: E731
    runs = run_metrics(fill(generations, schema_g), fill(invasions, schema_i))
    a1 = runs.filter((pl.col("model") == "a") & (pl.col("run") == "r1")).row(0, named=True)
    assert a1["donation_fraction"] == pytest.approx(0.7) and a1["mean_final"] == pytest.approx(52.0) and a1["robustness"] == 0.5
    rows = {r["metric"]: r for r in evolution_comparison_rows(runs)}
    assert rows["donation_fraction"]["delta"] == pytest.approx(0.2)
    assert rows["robustness"]["delta"] == pytest.approx((0.5 + 1.0) / 2)
    assert rows["mean_final"]["scope"] == "vh/default" and rows["mean_final"]["n_clusters"] == 2


def test_compare_cli_reads_gossip_from_the_store(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    con = duckdb.connect(str(store))
    con.register("source", _gossip_runs().to_arrow())
    con.execute("CREATE TABLE gossip_run_metrics AS SELECT * FROM source")
    con.close()
    code = main(["compare", str(store), "--study", "gossip", "--a", "m2", "--b", "m1", "--game", "donation"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["delta"] == pytest.approx(-0.3) and result["metric"] == "cooperation_ratio_mean"
    assert result["ci_low"] <= result["delta"] <= result["ci_high"]
    code = main(["compare", str(store), "--study", "gossip", "--a", "m1", "--b", "m9"])
    err = capsys.readouterr().err
    assert code == 2 and "m9" in err and "m1, m2, m3" in err
    # no attackers: no replicate has a utility gap; not an error but null numbers with the reason
    code = main(["compare", str(store), "--study", "gossip", "--a", "m1", "--b", "m2", "--metric", "utility_gap"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert all(result[k] is None for k in ("delta", "ci_low", "ci_high", "p_value", "p_adjusted", "mde"))
    assert result["n_clusters"] == 0 and "share no replicate with a finite utility_gap" in result["note"]
    code = main(["compare", str(store), "--study", "gossip", "--a", "m1", "--b", "m2", "--dr-rule", "strictest"])
    assert code == 2 and "only --study coopeval" in capsys.readouterr().err
    code = main(["compare", str(store), "--study", "chess", "--a", "m1", "--b", "m2"])
    assert code == 2 and "coopeval, evolution, gossip" in capsys.readouterr().err


def test_a_population_metric_matches_whatever_its_case() -> None:
    from coopeval.comparison.errors import UnknownNameError, metric_name

    assert metric_name("GINI", ["gini", "cooperation_ratio_mean"]) == "gini"
    assert metric_name("Gini", ["Gini", "gini"]) == "Gini"  # an exact spelling wins
    with pytest.raises(UnknownNameError, match="valid names: Gini, gini"):
        metric_name("GINI", ["Gini", "gini"])  # two names differ only in case: ambiguous
