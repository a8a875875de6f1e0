"""Justification frequencies of the judge's labels (docs/protocol/design-checks.md#label-shares), per mechanism, model and game.

Thin, figure-oriented wrappers around :func:`coopeval.studies.coopeval.judge.aggregate.label_shares`: only
successful judgements count, the denominator is every judged row of the group (or the
reference's inflated one with ``denominator="reference"``), and Stag Hunt and Matching Pennies
are dropped by default from pooled frames (docs/protocol/design-checks.md#what-is-judged, "dropped at analysis time").
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from coopeval import games
from coopeval.studies.coopeval.judge.aggregate import Denominator, label_shares

__all__ = ["excluded_games", "justification_shares"]

def excluded_games() -> tuple[str, ...]:
    """Games left out of pooled justification shares by default: those that are not social
    dilemmas (Stag Hunt, Matching Pennies; read from the games registry at call time, so a
    plugin game registered after import counts)."""
    return tuple(g for g in games.GAME_TYPES if g not in games.SOCIAL_DILEMMA_TYPES)


def justification_shares(
    judgements: pl.DataFrame,
    by: Sequence[str],
    labels: Sequence[str],
    denominator: Denominator = "judged",
    exclude_games: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Label shares per group (columns ``*by, label, count, n_judged, denominator, share``).

    Parameters
    ----------
    judgements:
        Rows of the ``judgements`` table.
    by:
        Group columns, e.g. ``["mechanism"]``, ``["agent"]``, ``["game"]`` or
        ``["mechanism", "agent", "game"]``.
    labels:
        The taxonomy's labels in display order (every label gets a row).
    denominator:
        ``"judged"`` (correct, default) or ``"reference"`` (``compat.judge_share_denominator``).
    exclude_games:
        Game type names to drop first (default :func:`excluded_games`); pass ``()`` to keep
        every game.
    """
    if exclude_games is None:
        exclude_games = excluded_games()
    rows = (
        judgements.filter(~pl.col("game").is_in(list(exclude_games)))
        if exclude_games
        else judgements
    )
    return label_shares(rows, by, labels, denominator=denominator)
