"""Justification frequencies of the judge's labels (docs/protocol/design-checks.md#label-shares), per mechanism, model and game.

Thin, figure-oriented wrappers around :func:`coopeval.studies.coopeval.judge.aggregate.label_shares`: only
successful judgements count, the denominator is every judged row of the group (or the
reference's inflated one with ``denominator="reference"``), and Stag Hunt and Matching Pennies
are dropped by default from pooled frames (docs/protocol/design-checks.md#what-is-judged, "dropped at analysis time").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from coopeval import games
from coopeval.studies.coopeval.judge.aggregate import label_shares

__all__ = ["excluded_games", "justification_shares"]

def excluded_games() -> tuple[str, ...]:
    """Games left out of pooled justification shares by default: those that are not social
    dilemmas (Stag Hunt, Matching Pennies; read from the games registry at call time, so a
    plugin game registered after import counts)."""
    return tuple(g for g in games.GAME_TYPES if g not in games.SOCIAL_DILEMMA_TYPES)


def justification_shares(judgements: pl.DataFrame, by: Sequence[str], labels: Sequence[str], **options: Any) -> pl.DataFrame:
    """:func:`~coopeval.studies.coopeval.judge.aggregate.label_shares` (columns ``*by, label,
    count, n_judged, denominator, share``; ``options``: ``denominator``, ``exclude_games``)
    leaving out :func:`excluded_games` unless ``exclude_games`` is given (``()`` keeps every
    game). ``by`` is e.g. ``["mechanism"]``, ``["agent"]``, ``["game"]`` or
    ``["mechanism", "agent", "game"]``; ``labels`` the taxonomy's labels in display order."""
    options.setdefault("exclude_games", excluded_games())
    return label_shares(judgements, by, labels, **options)
