"""Figure summaries from a small bot run of each protocol."""

from __future__ import annotations

import polars as pl

from coopeval.studies.evolution.summaries import (
    generation_metrics,
    lineage_edges,
    mean_matrices,
    robustness_per_generation,
)
from tests.helpers import play_study_cell, study_cells


def _run(protocol: str) -> dict[str, pl.DataFrame]:
    cfg = {"seed": 0, "evolution": {"models": [{"model": "bot/evo-reciprocal"}], "protocols": [protocol], "n_agents": 4, "generations": 3,
                                    "replicates": 2, "invasion": {"per_generation": 1}, "matrix": {"per_generation": 1}}}
    frames = [play_study_cell("evolution", c)[0] for c in study_cells("evolution", cfg)]
    return {t: pl.concat([f[t] for f in frames]) for t in frames[0]}


def test_summaries_vh() -> None:
    out = _run("vh")
    gm = generation_metrics(out["evo_generations"])
    assert gm.height == 3 and set(gm["n_runs"]) == {2}
    assert robustness_per_generation(out["invasion_tests"])["n_tested"].to_list() == [2, 2, 2]
    mm = mean_matrices(out["strategy_matrix"])
    assert mm.height == 121 and mm.filter((pl.col("i") == 3) & (pl.col("j") == 7))["mean_percentage"].item() == 70.0
    edges = lineage_edges(out["evo_strategies"])
    g2 = edges.filter((pl.col("generation") == 2) & (pl.col("run") == "r1"))
    assert g2.filter(pl.col("relation") == "survivor").height == 2
    assert g2.filter(pl.col("relation") == "advice").height == 2 * 2  # 2 newcomers x 2 survivors


def test_lineage_horibe() -> None:
    edges = lineage_edges(_run("horibe")["evo_strategies"])
    assert set(edges["relation"]) == {"offspring"} and edges.height == 2 * 2 * 4
    assert all(p.startswith(f"{g - 1}_") for g, p in zip(edges["generation"], edges["parent"], strict=True))
