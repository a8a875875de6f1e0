"""Action probabilities: the mean stated probability of each action (docs/protocol/answers.md#sampling: agents answer
with a distribution that the code samples), per game and mechanism, pooled over models or per
model.

Only successfully parsed action decisions count. Under Mediation the distribution also covers
the delegate token ``A{n}`` (labelled ``Delegate``). Probabilities are fractions in [0, 1].
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

from coopeval.games import get_game

__all__ = ["DELEGATE_LABEL", "action_label", "action_probabilities"]

DELEGATE_LABEL = "Delegate"

_SCHEMA = {"token": pl.String, "action": pl.String, "probability": pl.Float64, "n": pl.Int64}


def action_label(game: str, token: str) -> str:
    """The action name of ``token`` in ``game`` (type name or key); ``A{n}`` is ``Delegate``."""
    g = get_game(game)
    index = int(token[1:])
    return g.actions[index] if index < g.n_actions else DELEGATE_LABEL


def action_probabilities(
    decisions: pl.DataFrame, by: Sequence[str] = ("mechanism",)
) -> pl.DataFrame:
    """Mean stated probability of each action token per (``by``, game).

    Parameters
    ----------
    decisions:
        Rows of the ``decisions`` table (kind, status, parsed, game and the ``by`` columns).
    by:
        Grouping besides ``game``: ``("mechanism",)`` pools all models, ``("mechanism",
        "agent")`` splits by model.

    Returns
    -------
    polars.DataFrame
        Columns ``*by, game, token, action, probability, n``: ``probability`` is the mean over
        the group's decisions of the stated percent / 100, ``n`` the number of decisions.
    """
    by = [c for c in by if c != "game"]
    keys = [*by, "game"]
    actions = decisions.filter(
        (pl.col("kind") == "action") & (pl.col("status") == "ok") & pl.col("parsed").is_not_null()
    )
    if actions.height == 0:
        return pl.DataFrame(schema={**dict.fromkeys(keys, pl.String), **_SCHEMA})
    rows = []
    for row in actions.select([*keys, "parsed"]).iter_rows(named=True):
        for token, percent in json.loads(row["parsed"]).items():
            rows.append({**{k: row[k] for k in keys}, "token": token, "p": percent / 100.0})
    long = pl.DataFrame(rows, infer_schema_length=None)
    out = (
        long.group_by([*keys, "token"])
        .agg(pl.col("p").mean().alias("probability"), pl.len().cast(pl.Int64).alias("n"))
        .sort([*keys, "token"])
    )
    labels = {
        (g, t): action_label(g, t) for g, t in out.select("game", "token").unique().iter_rows()
    }
    out = out.with_columns(
        pl.struct("game", "token")
        .map_elements(lambda s: labels[(s["game"], s["token"])], return_dtype=pl.String)
        .alias("action")
    )
    return out.select([*keys, "token", "action", "probability", "n"])
