"""Conditional action frequencies under Repetition and Reputation: how often an agent plays
each action given what its current co-player(s) played in the previous round.

Under Repetition the co-player is the same all matchup, so "previous" is the co-player's move
in round r − 1 of this matchup. Under Reputation partners change every round; the condition is
the current co-player's own move in round r − 1 (against whoever it met then), which is the
most recent entry of the history the agent is shown. In games with more than two players the
condition is the multiset of the co-players' previous moves (e.g. ``Contribute + Free-ride``).
Round 1 has no condition and is left out, as is any decision whose co-player's previous move
is missing (a failed decision).

Two measures per (condition, action): ``frequency``, the share of realised (sampled) actions,
and ``probability``, the mean stated probability.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

from coopeval.studies.coopeval.analysis import agent_schema
from coopeval.studies.coopeval.analysis.actions import action_label
from coopeval.studies.coopeval.mechanisms import catalog

__all__ = ["conditional_action_frequencies"]


_OUT_SCHEMA = agent_schema(
    condition=pl.String, action=pl.String, count=pl.Int64, n=pl.Int64, frequency=pl.Float64, probability=pl.Float64
)


def conditional_action_frequencies(
    decisions: pl.DataFrame, mechanisms: Sequence[str] | None = None
) -> pl.DataFrame:
    """Action frequencies given the co-players' previous actions, per (mechanism, game, agent).

    Parameters
    ----------
    decisions:
        Rows of the ``decisions`` table: cell_id, mechanism, game, matchup_id, match_id, round,
        seat, agent, kind, status, action, parsed.
    mechanisms:
        Mechanisms to include (default: the registry's conditional mechanisms, read at call time).

    Returns
    -------
    polars.DataFrame
        Columns ``mechanism, game, agent, condition, action, count, n, frequency,
        probability``: ``n`` decisions of the agent under that condition, ``count`` of them
        realised ``action`` (``frequency = count / n``), ``probability`` the mean stated
        probability of ``action``. Every action of the game appears for every observed
        condition (zero counts included). ``condition`` and ``action`` are action names.
    """
    if mechanisms is None:
        mechanisms = catalog.CONDITIONAL_MECHANISMS
    moves = decisions.filter(
        pl.col("mechanism").is_in(list(mechanisms)) & (pl.col("kind") == "action")
    ).with_columns(pl.coalesce("match_id", "matchup_id").alias("_match"))
    acts = moves.filter((pl.col("status") == "ok") & pl.col("action").is_not_null())
    if acts.height == 0:
        return pl.DataFrame(schema=_OUT_SCHEMA)
    acts = acts.with_row_index("_row")
    # the previous action of every player (a player = matchup_id + seat within its cell)
    previous = acts.select(
        "cell_id",
        pl.col("matchup_id").alias("_co_matchup"),
        pl.col("seat").alias("_co_seat"),
        (pl.col("round") + 1).alias("round"),
        pl.col("action").alias("_prev"),
    )
    # co-players come from every move of the round, failed ones included (their previous move
    # may still be known); a co-player without a known previous move drops the decision
    co = moves.select(
        "cell_id",
        "_match",
        "round",
        pl.col("seat").alias("_co_seat"),
        pl.col("matchup_id").alias("_co_matchup"),
    )
    pairs = (
        acts.select("_row", "cell_id", "_match", "round", "seat", "game")
        .join(co, on=["cell_id", "_match", "round"])
        .filter(pl.col("_co_seat") != pl.col("seat"))
        .join(previous, on=["cell_id", "_co_matchup", "_co_seat", "round"], how="left")
    )
    n_co = pairs.group_by("_row").agg(
        pl.len().alias("_n_co"), pl.col("_prev").null_count().alias("_missing")
    )
    conditions = (
        pairs.drop_nulls("_prev")
        .group_by("_row", "game")
        .agg(pl.col("_prev").sort().alias("_prevs"))
        .join(n_co, on="_row")
        .filter(pl.col("_missing") == 0)
    )
    labelled = conditions.with_columns(
        pl.struct("game", "_prevs")
        .map_elements(
            lambda s: " + ".join(action_label(s["game"], f"A{a}") for a in s["_prevs"]),
            return_dtype=pl.String,
        )
        .alias("condition")
    ).select("_row", "condition")
    rows = acts.join(labelled, on="_row")
    if rows.height == 0:
        return pl.DataFrame(schema=_OUT_SCHEMA)
    long = []
    for row in rows.select("mechanism", "game", "agent", "condition", "action", "parsed").iter_rows(
        named=True
    ):
        distribution = json.loads(row["parsed"])
        for token, percent in distribution.items():
            index = int(token[1:])
            long.append(
                {
                    "mechanism": row["mechanism"],
                    "game": row["game"],
                    "agent": row["agent"],
                    "condition": row["condition"],
                    "token": token,
                    "hit": int(index == row["action"]),
                    "p": percent / 100.0,
                }
            )
    frame = pl.DataFrame(long, infer_schema_length=None)
    keys = ["mechanism", "game", "agent", "condition"]
    out = frame.group_by([*keys, "token"]).agg(
        pl.col("hit").sum().cast(pl.Int64).alias("count"),
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("p").mean().alias("probability"),
    )
    out = out.with_columns((pl.col("count") / pl.col("n")).alias("frequency"))
    out = out.with_columns(
        pl.struct("game", "token")
        .map_elements(lambda s: action_label(s["game"], s["token"]), return_dtype=pl.String)
        .alias("action")
    )
    return out.sort([*keys, "token"]).select(list(_OUT_SCHEMA))
