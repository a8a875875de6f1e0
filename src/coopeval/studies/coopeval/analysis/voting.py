"""Voting and adoption under Mediation and Contracting (docs/protocol/mechanisms.md#mediation, #contracting), per agent and game.

Every player of a matchup proposes a design (its seated agent's design); the designs are listed
in seat order, so option k of a matchup is the proposal of the agent in seat k. Measures, per
(mechanism, game, agent):

* ``approvals per proposal``: mean number of approvals (from all N voters, the proposer
  included) that the agent's proposals received;
* ``selected``: share of the agent's proposals that won the vote;
* ``signed`` (Contracting): share of the agent's signature decisions that signed;
* ``delegated`` (Mediation): share of the agent's moves that were delegated to the mediator.

Only matchups with a selection (the vote took place) count as proposals; failed signature and
action decisions are left out of their measures.
"""

from __future__ import annotations

import polars as pl

from coopeval.studies.coopeval.analysis import agent_schema
from coopeval.studies.coopeval.mechanisms import catalog

__all__ = ["MEASURES", "voting_adoption"]

MEASURES = ("approvals per proposal", "selected", "signed", "delegated")

_OUT_SCHEMA = agent_schema(measure=pl.String, value=pl.Float64, n=pl.Int64)


def voting_adoption(
    votes: pl.DataFrame,
    selections: pl.DataFrame,
    matchups: pl.DataFrame,
    decisions: pl.DataFrame,
) -> pl.DataFrame:
    """Approvals, selection, signing and delegation rates per (mechanism, game, agent).

    Parameters
    ----------
    votes, selections, matchups, decisions:
        The store tables of the same name (only Mediation and Contracting rows are used).

    Returns
    -------
    polars.DataFrame
        Long format: ``mechanism, game, agent, measure, value, n`` (``n`` = proposals,
        signature decisions or moves behind the value), sorted by mechanism, game, measure
        (in :data:`MEASURES` order), agent.
    """
    is_design = pl.col("mechanism").is_in(list(catalog.DESIGN_MECHANISMS))
    keys = ["cell_id", "matchup_id"]
    parts: list[pl.DataFrame] = []

    selected = selections.filter(is_design)
    if selected.height:
        seats = (
            matchups.filter(is_design)
            .select(*keys, "agents")
            .with_columns(pl.int_ranges(1, pl.col("agents").list.len() + 1).alias("option"))
            .explode("agents", "option")
            .rename({"agents": "agent"})
        )
        proposals = selected.select(*keys, "mechanism", "game", "selected_index").join(
            seats, on=keys
        )
        approvals = (
            votes.filter(is_design)
            .group_by(*keys, "option")
            .agg(pl.col("approve").sum().cast(pl.Int64).alias("_approvals"))
        )
        proposals = proposals.join(approvals, on=[*keys, "option"], how="left").with_columns(
            pl.col("_approvals").fill_null(0)
        )
        grouped = proposals.group_by("mechanism", "game", "agent")
        parts.append(
            grouped.agg(
                pl.col("_approvals").mean().alias("value"), pl.len().alias("n")
            ).with_columns(pl.lit("approvals per proposal").alias("measure"))
        )
        parts.append(
            grouped.agg(
                (pl.col("option") == pl.col("selected_index")).mean().alias("value"),
                pl.len().alias("n"),
            ).with_columns(pl.lit("selected").alias("measure"))
        )
    ok = decisions.filter(is_design & (pl.col("status") == "ok"))
    signs = ok.filter(pl.col("kind") == "sign")
    if signs.height:
        parts.append(
            signs.with_columns(
                (pl.col("parsed").str.json_path_match("$.sign") == "true").alias("_signed")
            )
            .group_by("mechanism", "game", "agent")
            .agg(pl.col("_signed").mean().alias("value"), pl.len().alias("n"))
            .with_columns(pl.lit("signed").alias("measure"))
        )
    moves = ok.filter((pl.col("kind") == "action") & pl.col("mechanism").is_in(list(catalog.DELEGATING_MECHANISMS)))
    if moves.height:
        parts.append(
            moves.group_by("mechanism", "game", "agent")
            .agg(pl.col("mediated").fill_null(False).mean().alias("value"), pl.len().alias("n"))
            .with_columns(pl.lit("delegated").alias("measure"))
        )
    if not parts:
        return pl.DataFrame(schema=_OUT_SCHEMA)
    out = pl.concat(
        [p.select(pl.col(c).cast(t) for c, t in _OUT_SCHEMA.items()) for p in parts], how="vertical"
    )
    order = pl.col("measure").replace_strict(
        list(MEASURES), list(range(len(MEASURES))), return_dtype=pl.Int64
    )
    return out.sort(["mechanism", "game", order, "agent"])
