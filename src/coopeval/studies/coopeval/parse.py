"""The parse stage: raw play records → tidy matchup and score tables.

Per (matchup, seat) the δ-weighted score (docs/protocol/tournament.md#delta-weighted-score) of its per-round points. A matchup with a
failed decision keeps status ``failed`` and gets no scores: downstream metrics exclude it and
report how many were excluded (docs/protocol/answers.md#re-asks).
"""

from __future__ import annotations

import polars as pl

from coopeval.core.schemas import conform
from coopeval.evaluation.scores import discounted_average

ID_COLUMNS = ["cell_id", "source", "run", "mechanism", "game"]


def matchup_scores(decisions: pl.DataFrame, matchups: pl.DataFrame) -> pl.DataFrame:
    """One ``scores`` row per (complete matchup, seat).

    Parameters
    ----------
    decisions:
        ``decisions`` rows of one cell (action decisions carry ``points`` per round).
    matchups:
        ``matchups`` rows of the same cell (``discount``, ``n_rounds``, ``status``).

    Raises
    ------
    ValueError
        If a complete matchup lacks points for a round of a seat.
    """
    complete = matchups.filter(pl.col("status") == "complete")
    actions = decisions.filter((pl.col("kind") == "action") & (pl.col("status") == "ok"))
    rows = []
    for m in complete.iter_rows(named=True):
        moves = actions.filter(pl.col("matchup_id") == m["matchup_id"]).sort(["seat", "round"])
        # Seats come from the moves: a reputation "matchup" is one seated agent's history.
        for (seat, agent), seat_moves in moves.group_by(["seat", "agent"], maintain_order=True):
            points = seat_moves["points"].to_list()
            if len(points) != m["n_rounds"] or any(p is None for p in points):
                raise ValueError(
                    f"matchup {m['matchup_id']} seat {seat}: expected {m['n_rounds']} rounds of points, found {len(points)}"
                )
            rows.append(
                {
                    **{c: m[c] for c in ID_COLUMNS},
                    "matchup_id": m["matchup_id"],
                    "seat": seat,
                    "agent": agent,
                    "score": discounted_average(points, m["discount"]),
                    "status": "complete",
                }
            )
    return conform("scores", pl.DataFrame(rows)) if rows else conform("scores", pl.DataFrame())
