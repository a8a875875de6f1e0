"""Rank tie groups of the leaderboard tables, from the ``comparisons`` table (docs/comparisons.md).

In one sub-table (one (mechanism, game, metric) for the per-game table, one (mechanism,
metric) over the aggregate games for the aggregate table) the agents are ordered by their table
rank (then by the table's agent order) and lettered by
:func:`coopeval.comparison.letters.letter_groups`: two agents share a letter if and only if
their paired difference is not significant at α = 0.05 after the correction named in the
``comparisons`` rows (their family: every pair of that sub-table). An agent with no comparison
row in the sub-table (e.g. the LLM Average, the Fitness of the aggregate table) gets no letters
(null). Values, ranks and emphasis of the tables do not change.

A sub-table whose comparisons can claim nothing (:func:`untestable_families`: every row
untestable at its number of clusters, or stable at one replicate, by the one rule of
:func:`coopeval.comparison.evidence.verdict`) gets ``"not testable (…)"`` instead of letters, which
would put every agent in one group "a" as if that had been tested.

The ``DR`` comparison rows compare the deviation-rating ranks under the configured rule
(``evaluation.dr_rule``); :func:`table_tie_groups` lets them letter the tables' ``DR`` where its
values are those ranks (not released ratings) and ``DR_exact`` (strictest-CCE ranks) when the
rule is ``strictest``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from coopeval.comparison.letters import letter_groups
from coopeval.comparison.power import DEFAULT_ALPHA
from coopeval.studies.coopeval.tables.frames import TableCell

__all__ = ["NOT_TESTABLE", "TieGroups", "attach_tie_groups", "table_tie_groups", "tie_groups_from", "untestable_families"]

NOT_TESTABLE = "not testable"
"""The start of a ``tie_group`` that is not letters (:func:`untestable_families`)."""

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


def table_tie_groups(
    groups: TieGroups, dr_rule: str, dr_source: Mapping[tuple[str, str], str], aggregate_games: Sequence[str]
) -> TieGroups:
    """The groups of the tables' sub-tables: Mean and Fitness as compared; the ``DR``
    comparisons (ranks under ``dr_rule``) for the table's ``DR`` of a scope whose values all
    come from ``dr_rule`` (``dr_source`` of (mechanism, game), as
    :func:`coopeval.studies.coopeval.tables.per_game.per_run_values` returns it; a scope
    ``<mechanism>/All`` covers the ``aggregate_games``), and for ``DR_exact`` when ``dr_rule``
    is ``"strictest"``. A scope with released ratings gets no DR letters."""
    out: TieGroups = {}
    for (scope, metric), group in groups.items():
        if metric != "DR":
            out[(scope, metric)] = group
            continue
        mechanism, _, game = scope.partition("/")
        games = aggregate_games if game == "All" else (game,)
        if {dr_source.get((mechanism, g)) for g in games} - {None} == {dr_rule}:
            out[(scope, "DR")] = group
        if dr_rule == "strictest":
            out[(scope, "DR_exact")] = group
    return out


def untestable_families(comparisons: Any, replicates: Mapping[str, int] | None = None) -> dict[tuple[str, str], str]:
    """(scope, metric) → ``"not testable (…)"`` for each family of ``comparisons`` rows none of
    which can be read as significant or not (:func:`coopeval.comparison.evidence.verdict`: every
    row untestable at its size, or stable at one replicate), so that its tie-group letters (every
    agent "a") are not shown as a finding. ``replicates`` gives a CoopEval scope's replicates; None
    for a population study, whose clusters are its replicates."""
    from coopeval.comparison.evidence import NOT_SIGNIFICANT, SIGNIFICANT, verdict

    families: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in comparisons.iter_rows(named=True):
        families.setdefault((str(row["scope"]), str(row["metric"])), []).append(row)
    out = {}
    for (scope, metric), members in families.items():
        reps = replicates.get(scope) if replicates is not None else None
        verdicts = [verdict(r, reps if replicates is not None else r.get("n_clusters"))[0] for r in members]
        if any(v in (SIGNIFICANT, NOT_SIGNIFICANT) for v in verdicts):
            continue
        clusters = max(int(r.get("n_clusters") or 0) for r in members)
        if replicates is None:
            out[(scope, metric)] = f"{NOT_TESTABLE} ({clusters} replicate{'' if clusters == 1 else 's'})"
        elif reps is not None and reps < 2:
            out[(scope, metric)] = f"{NOT_TESTABLE} (1 replicate)"
        else:
            out[(scope, metric)] = f"{NOT_TESTABLE} (n = {clusters} cluster{'' if clusters == 1 else 's'})"
    return out


def attach_tie_groups(
    rows: Sequence[TableCell], groups: TieGroups, agents: Sequence[str], untestable: Mapping[tuple[str, str], str] | None = None
) -> set[str]:
    """Set ``tie_group`` on every row (letters, or None) of ranked table rows, in place.

    ``rows`` carry ``mechanism``, ``game``, ``metric``, ``agent`` and ``rank``; the scope of a
    row is ``"<mechanism>/<game>"`` (the aggregate table's game is ``"All"``). ``agents`` is the
    table's agent order (rank ties keep it). A sub-table in ``untestable`` (by the comparisons'
    metric: ``DR`` for the tables' ``DR`` and ``DR_exact``; :func:`untestable_families`) gets that
    text instead of letters. Returns the corrections used.
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
        why = (untestable or {}).get((key[0], "DR" if key[1] == "DR_exact" else key[1]))
        for r in ranked:
            r["tie_group"] = why or letters[str(r["agent"])]
        used.add(correction)
    return used
