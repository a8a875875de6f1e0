"""NS / WD rates of submitted designs per agent and game, for the design-quality figure.

Reads the ``design_quality_summary`` table (docs/protocol/design-checks.md#ns-wd; one row per source, mechanism, game, agent)
and pools its counts across sources into long format: one row per (mechanism, game, agent,
criterion) with the rate, the binomial standard error √(p(1 − p)/n) (docs/protocol/tables.md step 6, per-game
variant) and the number of designs.
"""

from __future__ import annotations

import polars as pl

from coopeval.studies.coopeval.analysis import agent_schema

__all__ = ["design_rate_frame"]

_OUT_SCHEMA = agent_schema(criterion=pl.String, rate=pl.Float64, se=pl.Float64, n_designs=pl.Int64)


def design_rate_frame(summary: pl.DataFrame) -> pl.DataFrame:
    """Long NS/WD rates from ``design_quality_summary`` rows.

    Returns
    -------
    polars.DataFrame
        Columns ``mechanism, game, agent, criterion ("NS" | "WD"), rate, se, n_designs``;
        agents with no valid design are left out (their rate is undefined).
    """
    if summary.height == 0:
        return pl.DataFrame(schema=_OUT_SCHEMA)
    pooled = summary.group_by("mechanism", "game", "agent").agg(
        pl.col("n_designs").sum().alias("n_designs"),
        pl.col("ns_count").sum().alias("NS"),
        pl.col("wd_count").sum().alias("WD"),
    )
    pooled = pooled.filter(pl.col("n_designs") > 0)
    long = pooled.unpivot(
        index=["mechanism", "game", "agent", "n_designs"],
        on=["NS", "WD"],
        variable_name="criterion",
        value_name="count",
    )
    long = long.with_columns((pl.col("count") / pl.col("n_designs")).alias("rate"))
    long = long.with_columns(
        ((pl.col("rate") * (1 - pl.col("rate")) / pl.col("n_designs")).sqrt()).alias("se")
    )
    return long.select(pl.col(c).cast(t) for c, t in _OUT_SCHEMA.items()).sort(
        "mechanism", "game", "criterion", "agent"
    )
