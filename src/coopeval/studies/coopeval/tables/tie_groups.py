"""Rank tie groups of the leaderboard tables, from the ``comparisons`` table (docs/comparisons.md).

In one sub-table (one (mechanism, game, metric) for the per-game table, one (mechanism,
metric) over the aggregate games for the aggregate table) the agents are ordered by their table
rank (then by the table's agent order) and lettered by
:func:`coopeval.comparison.letters.letter_groups`: two agents share a letter if and only if
their paired difference is not significant at α = 0.05 after the correction named in the
``comparisons`` rows (their family: every pair of that sub-table). An agent with no comparison
row in the sub-table (e.g. the LLM Average, DR ranks, the Fitness of the aggregate table) gets
no letters (null). Values, ranks and emphasis of the tables do not change.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from coopeval.comparison.letters import letter_groups
from coopeval.comparison.power import DEFAULT_ALPHA
from coopeval.studies.coopeval.tables.frames import TableCell

__all__ = ["TieGroups", "attach_tie_groups", "tie_groups_from"]

TieGroups = dict[tuple[str, str], tuple[set[str], set[tuple[str, str]], str]]
"""(scope, metric) → (compared agents, significant pairs, correction name)."""


def tie_groups_from(comparisons: pl.DataFrame | None, study: str = "coopeval", alpha: float = DEFAULT_ALPHA) -> TieGroups:
    """The compared agents and significant pairs of every (scope, metric) of ``study``.

    A pair is significant when its ``p_adjusted`` is below ``alpha``; a null ``p_adjusted``
    (fewer than 2 clusters) is not significant.
    """
    groups: TieGroups = {}
    if comparisons is None or not comparisons.height:
        return groups
    for row in comparisons.filter(pl.col("study") == study).iter_rows(named=True):
        agents, significant, _ = groups.setdefault((row["scope"], row["metric"]), (set(), set(), str(row["correction"])))
        agents.update((row["a"], row["b"]))
        if row["p_adjusted"] is not None and row["p_adjusted"] < alpha:
            significant.add((row["a"], row["b"]))
    return groups


def attach_tie_groups(rows: Sequence[TableCell], groups: TieGroups, agents: Sequence[str]) -> set[str]:
    """Set ``tie_group`` on every row (letters, or None) of ranked table rows, in place.

    ``rows`` carry ``mechanism``, ``game``, ``metric``, ``agent`` and ``rank``; the scope of a
    row is ``"<mechanism>/<game>"`` (the aggregate table's game is ``"All"``). ``agents`` is the
    table's agent order (rank ties keep it). Returns the corrections used.
    """
    position = {agent: i for i, agent in enumerate(agents)}
    subtables: dict[tuple[str, str], list[TableCell]] = {}
    for row in rows:
        row["tie_group"] = None
        subtables.setdefault((f"{row['mechanism']}/{row['game']}", str(row["metric"])), []).append(row)
    used: set[str] = set()
    for key, members in subtables.items():
        if key not in groups:
            continue
        compared, significant, correction = groups[key]
        ranked = [r for r in members if r["agent"] in compared and r["rank"] is not None]
        ranked.sort(key=lambda r: (r["rank"], position.get(str(r["agent"]), len(position))))
        letters = letter_groups([str(r["agent"]) for r in ranked], significant)
        for r in ranked:
            r["tie_group"] = letters[str(r["agent"])]
        used.add(correction)
    return used
