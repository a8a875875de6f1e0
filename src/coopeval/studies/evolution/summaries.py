"""Figure-ready summaries of the evolution tables (issue 11 §8; docs/protocol/evolution.md#vh-metrics).

Pure polars transforms, one per figure: per-generation population metrics, robustness per
generation, mean strategy matrices, and the lineage edges of the strategy texts.
"""

from __future__ import annotations

import polars as pl

RUN_KEYS = ("protocol", "model", "variant")
GENERATION_METRICS = ("mean_final", "donation_fraction", "punish_frequency", "refuse_frequency")


def generation_metrics(generations: pl.DataFrame) -> pl.DataFrame:
    """Per protocol × model × variant × generation: mean (over runs) of mean final resources,
    donation fraction, punishment and refusal frequency, plus the number of runs. The per-run
    lines are the rows of ``evo_generations`` itself.

    Means are NaN-aware on purpose (issue 25 kind 7): a run whose value is NaN or null is left
    out of that metric's mean, and ``n_valid_<metric>`` (next to ``n_runs``) counts the runs used.
    """
    return (
        generations.group_by([*RUN_KEYS, "generation"])
        .agg(
            pl.len().alias("n_runs"),
            *(pl.col(c).cast(pl.Float64).fill_nan(None).mean() for c in GENERATION_METRICS),
            *(pl.col(c).cast(pl.Float64).fill_nan(None).count().alias(f"n_valid_{c}") for c in GENERATION_METRICS),
        )
        .sort([*RUN_KEYS, "generation"])
    )


def robustness_per_generation(invasion: pl.DataFrame) -> pl.DataFrame:
    """Per protocol × model × variant × generation: tests and robustness (%)."""
    return (
        invasion.group_by([*RUN_KEYS, "generation"])
        .agg(pl.len().alias("n_tested"), (pl.col("robust").cast(pl.Float64).mean() * 100).alias("robustness"))
        .sort([*RUN_KEYS, "generation"])
    )


def mean_matrices(matrix: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Long-format mean matrices: protocol, model, variant, i, j, mean percentage over the
    analysed strategies (and samples) of ``generation`` (default: every generation)."""
    df = matrix.filter(pl.col("parse_status") == "ok")
    if generation is not None:
        df = df.filter(pl.col("generation") == generation)
    return (
        df.group_by([*RUN_KEYS, "i", "j"])
        .agg(pl.col("percentage").mean().alias("mean_percentage"), pl.col("strategy_id").n_unique().alias("n_strategies"))
        .sort([*RUN_KEYS, "i", "j"])
    )


def lineage_edges(strategies: pl.DataFrame) -> pl.DataFrame:
    """Who descended from whom: cell_id, run, generation (of the child), child, parent,
    relation. Horibe offspring → ``offspring`` (their roulette parent); V&H survivors →
    ``survivor`` (themselves in the previous generation); V&H newcomers → ``advice`` (one edge
    per survivor whose text they were shown)."""
    keys = ["cell_id", "run", "generation"]
    s = strategies.select(*keys, "agent_id", "parent_id", "survived")
    offspring = s.filter(pl.col("parent_id").is_not_null()).select(
        *keys, pl.col("agent_id").alias("child"), pl.col("parent_id").alias("parent"), pl.lit("offspring").alias("relation")
    )
    survivors = s.filter(pl.col("survived")).select(
        *keys, pl.col("agent_id").alias("child"), pl.col("agent_id").alias("parent"), pl.lit("survivor").alias("relation")
    )
    newcomers = s.filter(~pl.col("survived") & pl.col("parent_id").is_null() & (pl.col("generation") > 1))
    advisers = s.filter(pl.col("survived")).select(*keys, pl.col("agent_id").alias("parent"))
    advice = newcomers.join(advisers, on=keys).select(
        *keys, pl.col("agent_id").alias("child"), "parent", pl.lit("advice").alias("relation")
    )
    return pl.concat([offspring, survivors, advice]).sort([*keys, "child", "parent"])
